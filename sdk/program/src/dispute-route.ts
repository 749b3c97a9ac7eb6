// How a payer disputes one execution, chosen once for every tool (the dashboard, the CLI, the
// SDK): settled by `settle`, its Receipt account exists and `open_dispute` names it; settled by
// `settle_batch`, it is a leaf of the agent's receipt log and `open_dispute_from_log` carries the
// leaf and its Merkle proof, which the indexer's public GraphQL serves (`Execution.receiptProof`,
// docs/indexer.md). The indexer is not trusted: the program accepts the proof only if it leads to
// a root the log holds on chain, and `verifyLoggedReceipt` checks the same from the chain alone.
import { PublicKey, type Connection, type TransactionInstruction } from "@solana/web3.js";

import { fetchReceipt, type FetchOptions } from "./accounts.js";
import { openDisputeFromLogInstruction } from "./batch-instructions.js";
import { fromHex, toHex } from "./bytes.js";
import type { ReceiptProofQuery, ReceiptProofQueryVariables } from "./generated/graphql.js";
import { openDisputeInstruction } from "./dispute-instructions.js";
import { receiptLogPda, receiptPda } from "./pda.js";
import { fetchReceiptLog, receiptLeafHash, receiptLogHoldsRoot, receiptRootFromProof } from "./receipt-log.js";
import type { ReceiptLeaf } from "./types.js";

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
        leaf { executionId payer payerTokenAccount apiKeyId amountUsdc feeUsdc requestHash resultHash settledAt }
        leafHash leafIndex tree logRoot root treeLeaves proof
      }
    }
  }
`;

/**
 * The execution's receipt log leaf and proof from an indexer's GraphQL at `graphqlUrl`; null
 * when the indexer knows no such execution or it was not settled by settle_batch. Throws with
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

/** The leaf's fields as open_dispute_from_log takes them (and receiptLeafHash hashes them). */
export function receiptLeafOf(leaf: ServedReceiptLeaf): ReceiptLeaf {
  return {
    executionId: fromHex(leaf.executionId),
    payer: new PublicKey(leaf.payer),
    payerTokenAccount: new PublicKey(leaf.payerTokenAccount),
    apiKeyId: fromHex(leaf.apiKeyId),
    amountUsdc: BigInt(leaf.amountUsdc),
    requestHash: fromHex(leaf.requestHash),
    resultHash: fromHex(leaf.resultHash),
    settledAt: BigInt(leaf.settledAt),
  };
}

/** What a dispute of the execution rests on: what both routes share, for the window and the summary. */
interface Settled {
  agent: PublicKey;
  payer: PublicKey;
  amountUsdc: bigint;
  /** Chain seconds; the dispute window ends `dispute_window_secs` after. */
  settledAt: bigint;
}

export type DisputeRoute =
  | (Settled & { kind: "receipt"; disputed: boolean })
  | (Settled & { kind: "log"; leaf: ReceiptLeaf; leafIndex: bigint; proof: Uint8Array[] });

/**
 * How `executionId` can be disputed: its Receipt account if it exists (settled by `settle`, or
 * disputed from the log already: that dispute wrote one, marked disputed), otherwise its leaf in
 * the receipt log as `loggedReceipt` finds it (the indexer's GraphQL). Null when neither exists:
 * never settled, or the receipt was closed after its dispute window.
 */
export async function disputeRoute(
  connection: Connection,
  executionId: Uint8Array,
  options: { programId: PublicKey; loggedReceipt: () => Promise<LoggedReceipt | null> },
): Promise<DisputeRoute | null> {
  const { programId } = options;
  const receipt = await fetchReceipt(connection, receiptPda(executionId, programId), { programId });
  if (receipt) {
    return { kind: "receipt", agent: receipt.agent, payer: receipt.payer, amountUsdc: receipt.amountUsdc, settledAt: receipt.settledAt, disputed: receipt.disputed };
  }
  const logged = await options.loggedReceipt();
  if (!logged) return null;
  const leaf = receiptLeafOf(logged.receiptProof.leaf);
  if (toHex(leaf.executionId) !== toHex(executionId)) {
    throw new Error(`the indexer answered the leaf of execution ${logged.receiptProof.leaf.executionId}, not of ${toHex(executionId)}`);
  }
  return {
    kind: "log",
    agent: new PublicKey(logged.agent),
    payer: leaf.payer,
    amountUsdc: leaf.amountUsdc,
    settledAt: leaf.settledAt,
    leaf,
    leafIndex: BigInt(logged.receiptProof.leafIndex),
    proof: logged.receiptProof.proof.map(fromHex),
  };
}

/** `open_dispute` or `open_dispute_from_log`, as the route says, binding `evidenceHash`; the payer signs. */
export function openDisputeFor(
  route: DisputeRoute,
  input: { payer: PublicKey; executionId: Uint8Array; evidenceHash: Uint8Array; programId: PublicKey },
): TransactionInstruction {
  const { payer, executionId, evidenceHash, programId } = input;
  if (route.kind === "receipt") return openDisputeInstruction({ payer, agent: route.agent, executionId, evidenceHash, programId });
  if (!route.leaf.payer.equals(payer)) throw new Error(`the execution was paid by ${route.leaf.payer.toBase58()}, not ${payer.toBase58()}`);
  return openDisputeFromLogInstruction({ agent: route.agent, leaf: route.leaf, leafIndex: route.leafIndex, proof: route.proof, evidenceHash, programId });
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
