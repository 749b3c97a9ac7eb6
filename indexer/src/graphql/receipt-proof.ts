// Every settlement is a leaf of its agent's receipt log, kept by (agent, leaf index): an execution
// id opened again (as another escrow, with another nonce) settles into another leaf, and each is
// served and disputable on its own. A proof gives a dispute tool what open_dispute takes: the
// leaf's fields, its index and the siblings of the leaf up to a root the log keeps (receipt-trees.ts);
// the leaf's dispute, if any, comes with it.
import { prepared } from "@agent-market/service";

import type { ServedReceiptLeaf } from "@agent-market/program";
import { TREE_LEAVES } from "../ingest/receipt-leaf.js";
import type { GraphQLContext } from "./context.js";
import { graphqlError } from "./errors.js";
import type { ExecutionResolvers, LeafDispute, QueryResolvers, ReceiptProof } from "./generated/resolvers.js";
import { isoTime, money } from "./money.js";
import { upper } from "./rows.js";

export const RECEIPT_PROOF_TYPE_DEFS = /* GraphQL */ `
  "A receipt log leaf's fields as open_dispute takes them: bytes in hex, keys in base58, integers as decimal strings. The agent is the log's."
  type ReceiptLeaf {
    "The execution id's 16 bytes."
    executionId: String!
    "The escrow's nonce (u64): the agent's count of escrows opened before it, never repeated."
    nonce: String!
    payer: String!
    payerTokenAccount: String!
    "16 bytes; zeros for a call without an API key."
    apiKeyId: String!
    "USDC base units the escrow held: a fixed-price call's price, or the most a metered call may cost."
    amountUsdc: String!
    "USDC base units the settlement charged: the whole amount for a fixed-price call, units × price per unit for a metered one."
    chargedUsdc: String!
    "USDC base units: floor(charged × 1%), the marketplace's part of the charge, which the leaf hash commits to."
    feeUsdc: String!
    "USDC base units returned to the payer's token account in the settlement: amount − charged."
    returnedUsdc: String!
    "Units the creator signed (u64): a metered call is charged for them, a fixed-price call its whole amount whatever they are."
    units: String!
    requestHash: String!
    resultHash: String!
    "Seconds since the epoch, of the chain's clock."
    settledAt: String!
  }

  "The dispute of one leaf: the Dispute account at (agent, leaf index), as its events tell it."
  type LeafDispute {
    executionId: String!
    payer: String!
    state: DisputeState!
    "What the disputed settlement charged (a metered call's returned part was never paid)."
    amount: Money!
    "Hex of the evidence hash open_dispute bound."
    evidenceHash: String!
    openedAt: String
    resolvedAt: String
    slashed: Money!
    "close_dispute returned the payer's rent (resolved, and the leaf's window passed): the account is gone."
    closed: Boolean!
    "The close's block time, when the node gave one."
    closedAt: String
  }

  "Where a settlement sits in its agent's receipt log, and its Merkle proof."
  type ReceiptProof {
    "The receipt log's agent."
    agent: String!
    leaf: ReceiptLeaf!
    "SHA-256(0x00 ‖ the leaf's fields, the fee among them), hex."
    leafHash: String!
    "The leaf's index in the log, across trees (u64, decimal): leaf i is leaf i mod 2^18 of tree i / 2^18. With the agent, the dispute's key."
    leafIndex: String!
    tree: Int!
    "The root the chain recorded after this leaf's batch, hex."
    logRoot: String!
    "The root the proof leads to, hex: the one after the newest checkpoint batch at or after this leaf (the log keeps 64 checkpoints, one a minute at most, so at least an hour), else, for a leaf newer than every checkpoint, the tree's root over every leaf stored now (kept for 64 batches)."
    root: String!
    "Leaves of the tree under that root."
    treeLeaves: Int!
    "The 18 sibling hashes from the leaf up, hex."
    proof: [String!]!
    "The leaf's dispute; null if none was opened."
    dispute: LeafDispute
  }
`;

/** A `receipt_leaves` row as read. */
interface LeafRecord {
  agent: string;
  leaf_index: string;
  leaf: ServedReceiptLeaf;
  leaf_hash: string;
  log_root: string;
  signature: string;
}

/** A `disputes` row as read. */
interface DisputeRecord {
  execution_id: string;
  payer: string;
  state: "open" | "upheld" | "rejected";
  amount_usdc: string;
  evidence_hash: string;
  opened_at: string;
  resolved_at: string | null;
  slashed_usdc: string;
  closed: boolean;
  closed_at: string | null;
  max_slot: string;
}

const U64 = /^(0|[1-9][0-9]{0,19})$/;

/** The leaf's proof against a root the log keeps, and its dispute. */
async function proofOf(ctx: GraphQLContext, leaf: LeafRecord): Promise<ReceiptProof> {
  const leafIndex = Number(leaf.leaf_index);
  const db = ctx.reading("agent", leaf.agent);
  const built = await ctx.receiptTrees.proof(leaf.agent, leafIndex).catch((err: Error) => {
    throw graphqlError("RECEIPT_LOG_INCOMPLETE", `no proof yet: ${err.message}`);
  });
  const [dispute] = (
    await db.query<DisputeRecord>(prepared(db, `SELECT * FROM ${ctx.schema}.disputes WHERE agent = $1 AND leaf_index = $2`, [leaf.agent, leaf.leaf_index]))
  ).rows;
  return {
    agent: leaf.agent,
    leaf: leaf.leaf,
    leafHash: leaf.leaf_hash,
    leafIndex: leaf.leaf_index,
    tree: Math.floor(leafIndex / TREE_LEAVES),
    logRoot: leaf.log_root,
    root: built.root.toString("hex"),
    treeLeaves: built.leaves,
    proof: built.proof.map((hash) => hash.toString("hex")),
    dispute: dispute ? await disputeOf(ctx, dispute) : null,
  };
}

async function disputeOf(ctx: GraphQLContext, row: DisputeRecord): Promise<LeafDispute> {
  const finality = await ctx.finality();
  return {
    executionId: row.execution_id,
    payer: row.payer,
    state: upper(row.state),
    amount: money(row.amount_usdc, Number(row.max_slot), finality),
    evidenceHash: row.evidence_hash,
    openedAt: isoTime(row.opened_at),
    resolvedAt: isoTime(row.resolved_at),
    slashed: money(row.slashed_usdc, Number(row.max_slot), finality),
    closed: row.closed,
    closedAt: isoTime(row.closed_at),
  };
}

/** The leaves of `executionId` in `agent`'s log, oldest first (more than one only if the id was opened again). */
async function leavesOf(ctx: GraphQLContext, agent: string, executionId: string): Promise<LeafRecord[]> {
  const db = ctx.reading("agent", agent);
  return (
    await db.query<LeafRecord>(
      prepared(db, `SELECT * FROM ${ctx.schema}.receipt_leaves WHERE execution_id = $1 AND agent = $2 ORDER BY leaf_index`, [executionId, agent]),
    )
  ).rows;
}

export const receiptProofResolvers = {
  Query: {
    receiptProof: async (_, args, ctx) => {
      if (!U64.test(args.leafIndex)) throw graphqlError("BAD_USER_INPUT", "leafIndex is a u64 in decimal", { argument: "leafIndex" });
      const db = ctx.reading("agent", args.agent);
      const [leaf] = (
        await db.query<LeafRecord>(
          prepared(db, `SELECT * FROM ${ctx.schema}.receipt_leaves WHERE agent = $1 AND leaf_index = $2`, [args.agent, args.leafIndex]),
        )
      ).rows;
      return leaf ? proofOf(ctx, leaf) : null;
    },
  } satisfies Pick<QueryResolvers, "receiptProof">,
  Execution: {
    /** The leaf of this execution's settlement (the transaction that closed its escrow); null if not settled. */
    receiptProof: async (row, _, ctx) => {
      if (row.state !== "settled") return null;
      const leaf = (await leavesOf(ctx, row.agent, row.id)).find((leaf) => leaf.signature === row.close_signature);
      return leaf ? proofOf(ctx, leaf) : null;
    },
    receiptProofs: async (row, _, ctx) => Promise.all((await leavesOf(ctx, row.agent, row.id)).map((leaf) => proofOf(ctx, leaf))),
  } satisfies Pick<ExecutionResolvers, "receiptProof" | "receiptProofs">,
};
