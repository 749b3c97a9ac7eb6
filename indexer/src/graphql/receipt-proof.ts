// An execution settled by settle_batch has no receipt account: it is a leaf of its agent's receipt
// log. `Execution.receiptProof` gives a dispute tool what open_dispute_from_log takes: the leaf's
// fields, its index and the siblings of the leaf up to the current root of its tree.
import { TREE_LEAVES } from "../ingest/receipt-leaf.js";
import { graphqlError } from "./errors.js";
import type { ExecutionResolvers } from "./generated/resolvers.js";

export const RECEIPT_PROOF_TYPE_DEFS = /* GraphQL */ `
  "A receipt log leaf's fields as open_dispute_from_log takes them: bytes in hex, keys in base58, integers as decimal strings. The agent is the log's."
  type ReceiptLeaf {
    "The execution id's 16 bytes."
    executionId: String!
    payer: String!
    payerTokenAccount: String!
    "16 bytes; zeros for a call without an API key."
    apiKeyId: String!
    "USDC base units."
    amountUsdc: String!
    "USDC base units: floor(amount × 1%), what the leaf hash commits to."
    feeUsdc: String!
    requestHash: String!
    resultHash: String!
    "Seconds since the epoch, of the chain's clock."
    settledAt: String!
  }

  "Where an execution settled by settle_batch sits in its agent's receipt log, and its Merkle proof."
  type ReceiptProof {
    leaf: ReceiptLeaf!
    "SHA-256(0x00 ‖ the leaf's fields), hex."
    leafHash: String!
    "The leaf's index in the log, across trees (u64, decimal): leaf i is leaf i mod 2^18 of tree i / 2^18."
    leafIndex: String!
    tree: Int!
    "The root the chain recorded after this execution's batch, hex."
    logRoot: String!
    "The root of the leaf's tree over every leaf stored now, hex: the proof leads to it."
    root: String!
    "Leaves the tree holds under that root."
    treeLeaves: Int!
    "The 18 sibling hashes from the leaf up, hex."
    proof: [String!]!
  }
`;

export const receiptProofResolvers = {
  /** Null for an execution not settled by settle_batch. */
  receiptProof: async (row, _, ctx) => {
    // The four are written together, by the settlement's EscrowSettledToLog.
    if (row.leaf_index === null || row.leaf_hash === null || row.log_root === null || row.receipt_leaf === null) return null;
    const leafIndex = Number(row.leaf_index);
    // The proof leads to the root over every leaf stored now: each settlement of the agent moves it.
    ctx.scope.read("agent", row.agent);
    const built = await ctx.receiptTrees.proof(row.agent, leafIndex).catch((err: Error) => {
      throw graphqlError("RECEIPT_LOG_INCOMPLETE", `no proof yet: ${err.message}`);
    });
    return {
      leaf: row.receipt_leaf,
      leafHash: row.leaf_hash,
      leafIndex: row.leaf_index,
      tree: Math.floor(leafIndex / TREE_LEAVES),
      logRoot: row.log_root,
      root: built.root.toString("hex"),
      treeLeaves: built.leaves,
      proof: built.proof.map((hash) => hash.toString("hex")),
    };
  },
} satisfies Pick<ExecutionResolvers, "receiptProof">;
