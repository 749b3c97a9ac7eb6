// Batched settlement on a real localnet, as the relayer sends it: the agent's receipt log,
// escrows settled together by settle_batch under one batch signature by the agent's key over
// their v2 result digests (a metered escrow's unused part returned to its payer's token account),
// and the payer's dispute of a leaf with the proof the indexer serves.
import {
  batchDigest,
  ed25519VerifyInstruction,
  escrowPda,
  fetchEscrow,
  openDisputeInstruction,
  outputHash,
  receiptLeafOf,
  resultDigest,
  returnAccounts,
  settleBatchInstruction,
  settledLeaves,
  type SettledLeaf,
  type ServedReceiptProof,
} from "@agent-market/program";

import { ed25519Sign, type AgentFixture, type OpenedEscrow, type TestMarket, type Wallet } from "@agent-market/tests/fixtures";

export interface SettledBatch {
  signature: string;
  /** The batch's leaves, from its one EscrowsSettledToLog. */
  events: SettledLeaf[];
}

/**
 * Settles `escrows` of `agent` in one settle_batch, signed once over the batch digest, each for
 * its `units` (by default its position in the batch), returning what a metered charge leaves.
 */
export async function settleBatch(
  market: TestMarket,
  agent: AgentFixture,
  escrows: readonly OpenedEscrow[],
  feeShardIndex = 0,
  units: readonly bigint[] = escrows.map((_, i) => BigInt(i)),
): Promise<SettledBatch> {
  const items = escrows.map((_, i) => ({ resultHash: outputHash({ summary: `Hi, ${i}.` }), units: units[i]! }));
  const bindings = await Promise.all(
    escrows.map(async (escrow) => (await fetchEscrow(market.connection, escrowPda(escrow.executionId, market.programId), { programId: market.programId }))!),
  );
  const digests = bindings.map((escrow, i) => resultDigest({ escrow, ...items[i]! }));
  const digest = batchDigest(agent.address, digests);
  const signature = await market.sendAsRelayer([
    ed25519VerifyInstruction(agent.signing.publicKey.toBytes(), ed25519Sign(agent.signing, digest), digest),
    settleBatchInstruction({
      programId: market.programId,
      relayer: market.relayer.publicKey,
      usdcMint: market.usdcMint,
      agent: agent.address,
      payoutAccount: agent.payoutAccount,
      executionIds: escrows.map((escrow) => escrow.executionId),
      items,
      feeShardIndex,
      returnAccounts: returnAccounts(bindings, items),
    }),
  ]);
  const events = settledLeaves(await market.events(signature));
  return { signature, events };
}

export const PROOF_FIELDS = `agent
  leaf { executionId nonce payer payerTokenAccount apiKeyId amountUsdc chargedUsdc feeUsdc returnedUsdc units requestHash resultHash settledAt }
  leafHash leafIndex tree logRoot root treeLeaves proof`;

export const RECEIPT_PROOF_FIELDS = `receiptProof { ${PROOF_FIELDS} }`;

const hex = (value: string) => new Uint8Array(Buffer.from(value, "hex"));

/** The payer's open_dispute with the served leaf and proof, sent and confirmed. */
export function disputeFromLog(market: TestMarket, agent: AgentFixture, payer: Wallet, served: ServedReceiptProof): Promise<string> {
  const instruction = openDisputeInstruction({
    programId: market.programId,
    agent: agent.address,
    leaf: receiptLeafOf(served.leaf),
    leafIndex: BigInt(served.leafIndex),
    proof: served.proof.map(hex),
    evidenceHash: new Uint8Array(32).fill(9),
  });
  return market.send([instruction], [payer.wallet]);
}
