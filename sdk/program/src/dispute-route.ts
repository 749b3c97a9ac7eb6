// How a payer disputes one execution, chosen once for every tool (the dashboard, the CLI, the
// SDK): every settlement is a leaf of its agent's receipt log, and `open_dispute` carries the leaf,
// its index and its Merkle proof. They come from the indexer's public GraphQL
// (`Execution.receiptProof`, docs/indexer.md) or, without an indexer, from the chain's history of
// the receipt log (receipt-history.ts). Neither is trusted: the program accepts the proof only if
// it leads to a root the log holds on chain, and `verifyLoggedReceipt` checks the same.
import { PublicKey, type Connection, type TransactionInstruction } from "@solana/web3.js";

import { utils } from "@coral-xyz/anchor";

import { decodeDispute, fetchDispute, type FetchOptions } from "./accounts.js";
import { fromHex, requireLength, toHex } from "./bytes.js";
import type { ReceiptProofQuery, ReceiptProofQueryVariables } from "./generated/graphql.js";
import { openDisputeInstruction } from "./dispute-instructions.js";
import { disputePda, receiptLogPda } from "./pda.js";
import { provenLeavesFromChain } from "./receipt-history.js";
import { fetchReceiptLog, receiptLeafHash, receiptLogHoldsRoot, receiptRootFromProof } from "./receipt-log.js";
import { IDL } from "./program.js";
import type { Dispute, ReceiptLeaf } from "./types.js";

const encodeBase58 = (bytes: Uint8Array) => utils.bytes.bs58.encode(bytes);

/**
 * `Execution.receiptProof` as the indexer serves it (bytes in hex, keys in base58, integers as
 * decimal strings), typed from the indexer's schema by the query below.
 */
export type ServedReceiptProof = NonNullable<NonNullable<ReceiptProofQuery["execution"]>["receiptProof"]>;
/** A receipt log leaf's fields on the wire, as the indexer stores them. The agent is the log's. */
export type ServedReceiptLeaf = ServedReceiptProof["leaf"];

/** An execution's place in its agent's receipt log, as served: the agent is the log's. */
export interface LoggedReceipt {
  agent: string;
  receiptProof: ServedReceiptProof;
}

export const RECEIPT_PROOF_QUERY = /* GraphQL */ `
  query ReceiptProof($id: ID!) {
    execution(id: $id) {
      agent
      receiptProof {
        leaf { executionId nonce payer payerTokenAccount apiKeyId amountUsdc chargedUsdc feeUsdc returnedUsdc units requestHash resultHash settledAt }
        leafHash leafIndex tree logRoot root treeLeaves proof
      }
    }
  }
`;

/**
 * The execution's receipt log leaf and proof from an indexer's GraphQL at `graphqlUrl`; null
 * when the indexer knows no such execution or it has not settled. Throws with
 * the indexer's own message when it answers an error (RECEIPT_LOG_INCOMPLETE: not caught up yet).
 */
export async function fetchLoggedReceipt(graphqlUrl: string, executionId: string): Promise<LoggedReceipt | null> {
  let response: Response;
  try {
    response = await fetch(graphqlUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: RECEIPT_PROOF_QUERY, variables: { id: executionId } satisfies ReceiptProofQueryVariables }),
    });
  } catch (error) {
    throw new Error(`the indexer at ${graphqlUrl} did not answer: ${error instanceof Error ? error.message : String(error)}`);
  }
  const body = (await response.json().catch(() => null)) as {
    data?: ReceiptProofQuery;
    errors?: { message: string }[];
  } | null;
  if (body?.errors?.length) throw new Error(`the indexer could not give ${executionId}'s receipt proof: ${body.errors[0]!.message}`);
  if (!response.ok || !body?.data) throw new Error(`the indexer at ${graphqlUrl} answered HTTP ${response.status}`);
  const execution = body.data.execution;
  return execution?.receiptProof ? { agent: execution.agent, receiptProof: execution.receiptProof } : null;
}

/** The leaf's fields as open_dispute takes them (and receiptLeafHash hashes them). */
export function receiptLeafOf(leaf: ServedReceiptLeaf): ReceiptLeaf {
  return {
    executionId: fromHex(leaf.executionId),
    nonce: BigInt(leaf.nonce),
    payer: new PublicKey(leaf.payer),
    payerTokenAccount: new PublicKey(leaf.payerTokenAccount),
    apiKeyId: fromHex(leaf.apiKeyId),
    amountUsdc: BigInt(leaf.amountUsdc),
    chargedUsdc: BigInt(leaf.chargedUsdc),
    returnedUsdc: BigInt(leaf.returnedUsdc),
    units: BigInt(leaf.units),
    requestHash: fromHex(leaf.requestHash),
    resultHash: fromHex(leaf.resultHash),
    settledAt: BigInt(leaf.settledAt),
  };
}

/** What `open_dispute` takes for one settlement, and where it was found. */
export interface DisputeRoute {
  agent: PublicKey;
  leaf: ReceiptLeaf;
  leafIndex: bigint;
  proof: Uint8Array[];
  /** "indexer": served by its GraphQL; "chain": rebuilt from the receipt log's history. */
  source: "indexer" | "chain";
  /** The leaf's dispute account exists: disputed already (resolved or not). */
  disputed: boolean;
}

/** Where to look for the settlement's leaf: the indexer's GraphQL, or the chain given the agent. */
export type LeafSource =
  | { kind: "indexer"; loggedReceipt: () => Promise<LoggedReceipt | null> }
  | {
      kind: "chain";
      agent: PublicKey;
      /** Picks the escrow of an id opened more than once; else the latest settlement `payer` paid. */
      nonce?: bigint;
      payer?: PublicKey;
    };

/**
 * How `executionId` can be disputed: its leaf in its agent's receipt log with a proof, found as
 * `source` says. Null when not found: never settled, or (from the chain) its tree's root is no
 * longer held, or (with `nonce` or `payer`) no settlement of the id matches.
 */
export async function disputeRoute(
  connection: Connection,
  executionId: Uint8Array,
  options: { programId: PublicKey; source: LeafSource },
): Promise<DisputeRoute | null> {
  const { programId, source } = options;
  let found: Omit<DisputeRoute, "disputed"> | null = null;
  if (source.kind === "indexer") {
    const logged = await source.loggedReceipt();
    if (!logged) return null;
    const leaf = receiptLeafOf(logged.receiptProof.leaf);
    if (toHex(leaf.executionId) !== toHex(executionId)) {
      throw new Error(`the indexer answered the leaf of execution ${logged.receiptProof.leaf.executionId}, not of ${toHex(executionId)}`);
    }
    found = {
      agent: new PublicKey(logged.agent),
      leaf,
      leafIndex: BigInt(logged.receiptProof.leafIndex),
      proof: logged.receiptProof.proof.map(fromHex),
      source: "indexer",
    };
  } else {
    const proven = (await provenLeavesFromChain(connection, source.agent, executionId, { programId })).filter(
      (p) => (source.nonce === undefined || p.leaf.nonce === source.nonce) && (source.payer === undefined || p.leaf.payer.equals(source.payer)),
    );
    const latest = proven[proven.length - 1];
    if (latest) found = { agent: latest.agent, leaf: latest.leaf, leafIndex: latest.leafIndex, proof: latest.proof, source: "chain" };
  }
  if (!found) return null;
  const dispute = await fetchDispute(connection, disputePda(found.agent, found.leafIndex, programId), { programId });
  return { ...found, disputed: dispute !== null };
}

/** `open_dispute` of the route's leaf, binding `evidenceHash`; the leaf's payer signs. */
export function openDisputeFor(
  route: DisputeRoute,
  input: { payer: PublicKey; evidenceHash: Uint8Array; programId: PublicKey },
): TransactionInstruction {
  if (!route.leaf.payer.equals(input.payer)) throw new Error(`the execution was paid by ${route.leaf.payer.toBase58()}, not ${input.payer.toBase58()}`);
  return openDisputeInstruction({
    agent: route.agent,
    leaf: route.leaf,
    leafIndex: route.leafIndex,
    proof: route.proof,
    evidenceHash: input.evidenceHash,
    programId: input.programId,
  });
}

/** A dispute account found on chain, with its address. */
export interface FoundDispute {
  address: PublicKey;
  dispute: Dispute;
}

// Dispute's layout after the discriminator: agent (32), leaf_index (8), execution_id (16).
const DISPUTE_EXECUTION_ID_OFFSET = 8 + 32 + 8;

/**
 * Every dispute account of the program about `executionId` (one per disputed settlement of the
 * id), read with getProgramAccounts: an arbiter finds a dispute from the execution id alone,
 * without the indexer, although its address is derived from the agent and the leaf index.
 */
export async function fetchDisputesOfExecution(connection: Connection, executionId: Uint8Array, options: FetchOptions): Promise<FoundDispute[]> {
  const discriminator = IDL.accounts.find((account) => account.name === "Dispute")!.discriminator;
  const accounts = await connection.getProgramAccounts(options.programId, {
    ...(options.commitment ? { commitment: options.commitment } : {}),
    filters: [
      { memcmp: { offset: 0, bytes: encodeBase58(Uint8Array.from(discriminator)) } },
      { memcmp: { offset: DISPUTE_EXECUTION_ID_OFFSET, bytes: encodeBase58(requireLength("executionId", executionId, 16)) } },
    ],
  });
  return accounts
    .map(({ pubkey, account }) => ({ address: pubkey, dispute: decodeDispute(account.data) }))
    .sort((a, b) => (a.dispute.leafIndex < b.dispute.leafIndex ? -1 : 1));
}

export interface LoggedReceiptCheck {
  /** The leaf hashes to what was served, and its proof leads to a root the log holds on chain. */
  ok: boolean;
  leafHash: string;
  /** Where the proof leads. */
  root: string;
  detail: string;
}

/**
 * Checks a served leaf and proof against the chain alone: the leaf hashed here (as the program
 * does), walked up its proof, and the root looked for in the agent's receipt log account.
 */
export async function verifyLoggedReceipt(connection: Connection, logged: LoggedReceipt, options: FetchOptions): Promise<LoggedReceiptCheck> {
  const agent = new PublicKey(logged.agent);
  const leafHash = receiptLeafHash(agent, receiptLeafOf(logged.receiptProof.leaf));
  const root = receiptRootFromProof(leafHash, BigInt(logged.receiptProof.leafIndex), logged.receiptProof.proof.map(fromHex));
  const [leafHex, rootHex] = [toHex(leafHash), toHex(root)];
  const check = (ok: boolean, detail: string): LoggedReceiptCheck => ({ ok, leafHash: leafHex, root: rootHex, detail });
  if (leafHex !== logged.receiptProof.leafHash) return check(false, `the leaf's fields hash to ${leafHex}, the indexer said ${logged.receiptProof.leafHash}`);
  const address = receiptLogPda(agent, options.programId);
  const log = await fetchReceiptLog(connection, address, options);
  if (!log) return check(false, `the agent has no receipt log account ${address.toBase58()}`);
  return receiptLogHoldsRoot(log, root)
    ? check(true, `leaf ${logged.receiptProof.leafIndex} and its proof lead to root ${rootHex}, held by the receipt log ${address.toBase58()}`)
    : check(false, `the proof leads to root ${rootHex}, which the receipt log ${address.toBase58()} does not hold`);
}
