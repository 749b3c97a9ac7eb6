// A settled execution's receipt log leaf and its Merkle proof rebuilt from the chain alone, for a
// payer who disputes without the marketplace's indexer: the transactions that touched the agent's
// receipt log (getSignaturesForAddress), their EscrowsSettledToLog events (a batch's leaves, in order),
// and a tree rebuilt over them up to a root the log account still holds.
import type { Connection, Finality, PublicKey } from "@solana/web3.js";

import { toHex } from "./bytes.js";
import { receiptLogPda } from "./pda.js";
import { fetchReceiptLog, receiptLeafHash, receiptLogHoldsRoot, RECEIPT_TREE_LEAVES } from "./receipt-log.js";
import { receiptTreeProof } from "./receipt-tree.js";
import { settledLeavesOfTransaction, type SettledLeaf } from "./settled-leaves.js";
import type { ReceiptLeaf, ReceiptLog } from "./types.js";

/** One settlement proven against the log: what open_dispute takes, and the root the proof leads to. */
export interface ProvenLeaf {
  agent: PublicKey;
  leaf: ReceiptLeaf;
  leafIndex: bigint;
  proof: Uint8Array[];
  root: Uint8Array;
}

type Settled = SettledLeaf;

/** getSignaturesForAddress's largest page. */
const SIGNATURE_PAGE = 1000;
/** Transactions fetched at once: enough to hide latency, few enough for a public RPC's rate limit. */
const FETCHES_AT_ONCE = 8;

export function receiptLeafOfEvent(event: Settled): ReceiptLeaf {
  return {
    executionId: event.executionId,
    nonce: event.nonce,
    payer: event.payer,
    payerTokenAccount: event.payerTokenAccount,
    apiKeyId: event.apiKeyId,
    amountUsdc: event.amountUsdc,
    chargedUsdc: event.chargedUsdc,
    returnedUsdc: event.returnedUsdc,
    units: event.units,
    requestHash: event.requestHash,
    resultHash: event.resultHash,
    settledAt: event.settledAt,
  };
}

/**
 * Every settlement of `executionId` into `agent`'s receipt log that can still be proven (its tree's
 * root is among those the log holds), oldest first; empty when the agent has no log or never
 * settled the id. An id opened more than once has one leaf per settlement, told apart by nonce.
 * Walks the log's history from the newest transaction back to the start of the trees holding
 * the id's leaves, so the cost grows with the settlements since then. Throws when the RPC's
 * history has a gap (a node that pruned it): no proof could be trusted to be complete.
 */
export async function provenLeavesFromChain(
  connection: Connection,
  agent: PublicKey,
  executionId: Uint8Array,
  options: { programId: PublicKey; commitment?: Finality },
): Promise<ProvenLeaf[]> {
  const { programId } = options;
  const commitment = options.commitment ?? "confirmed";
  const address = receiptLogPda(agent, programId);
  const log = await fetchReceiptLog(connection, address, { programId, commitment });
  if (!log) return [];
  const wanted = toHex(executionId);
  const leaves = new Map<bigint, Settled>();
  const treeOf = (index: bigint) => index / RECEIPT_TREE_LEAVES;
  const complete = () => {
    const targets = [...leaves.values()].filter((e) => toHex(e.executionId) === wanted);
    return targets.length > 0 && targets.every((e) => leaves.has(treeOf(e.leafIndex) * RECEIPT_TREE_LEAVES));
  };
  let before: string | undefined;
  while (!complete()) {
    const page = await connection.getSignaturesForAddress(address, { limit: SIGNATURE_PAGE, ...(before ? { before } : {}) }, commitment);
    if (page.length === 0) break;
    before = page[page.length - 1]!.signature;
    const landed = page.filter((s) => s.err === null).map((s) => s.signature);
    for (let i = 0; i < landed.length; i += FETCHES_AT_ONCE) {
      const txs = await Promise.all(
        landed.slice(i, i + FETCHES_AT_ONCE).map((signature) =>
          connection.getTransaction(signature, { commitment, maxSupportedTransactionVersion: 0 }),
        ),
      );
      for (const tx of txs) {
        if (!tx) continue;
        for (const leaf of settledLeavesOfTransaction(tx, programId)) {
          if (leaf.agent.equals(agent)) leaves.set(leaf.leafIndex, leaf);
        }
      }
    }
  }
  const found = [...leaves.values()].filter((e) => toHex(e.executionId) === wanted).sort((a, b) => (a.leafIndex < b.leafIndex ? -1 : 1));
  const proven: ProvenLeaf[] = [];
  for (const event of found) {
    const built = proveFromLeaves(agent, log, leaves, event.leafIndex);
    if (built) proven.push(built);
  }
  return proven;
}

/**
 * `leafIndex`'s proof over the leaves of its tree up to the latest batch end whose root the log
 * still holds; null when it holds none of them (the tree passed out of the log's history).
 */
function proveFromLeaves(agent: PublicKey, log: ReceiptLog, leaves: ReadonlyMap<bigint, Settled>, leafIndex: bigint): ProvenLeaf | null {
  const treeStart = (leafIndex / RECEIPT_TREE_LEAVES) * RECEIPT_TREE_LEAVES;
  const hashes: Uint8Array[] = [];
  for (let index = treeStart; index < treeStart + RECEIPT_TREE_LEAVES; index++) {
    const event = leaves.get(index);
    if (!event) break;
    hashes.push(receiptLeafHash(agent, receiptLeafOfEvent(event)));
  }
  const position = Number(leafIndex - treeStart);
  if (position >= hashes.length) throw new Error(`the chain's history of the receipt log lacks leaves before ${leafIndex}: the RPC may have pruned it`);
  // Each batch's events carry the root recorded after it: try the latest batch end first.
  for (let end = hashes.length; end > position; end--) {
    const last = leaves.get(treeStart + BigInt(end) - 1n)!;
    const next = leaves.get(treeStart + BigInt(end));
    const batchEnd = next === undefined || toHex(next.logRoot) !== toHex(last.logRoot);
    const fills = BigInt(end) === RECEIPT_TREE_LEAVES;
    if (!batchEnd && !fills) continue;
    const { root, proof } = receiptTreeProof(hashes.slice(0, end), position);
    // A filled tree's root is kept among the filled roots; a batch's, among the recent ones.
    if ((fills || toHex(root) === toHex(last.logRoot)) && receiptLogHoldsRoot(log, root)) {
      const event = leaves.get(leafIndex)!;
      return { agent, leaf: receiptLeafOfEvent(event), leafIndex, proof, root };
    }
  }
  return null;
}
