// Batched settlement on a real localnet, as the relayer will send it: the agent's receipt log,
// escrows settled together by settle_batch under one batch signature by the agent's key, and the
// payer's dispute from the log with the proof the indexer serves.
import {
  batchDigest,
  createReceiptLogInstruction,
  ed25519VerifyInstruction,
  openDisputeFromLogInstruction,
  outputHash,
  receiptLeafOf,
  resultDigest,
  settleBatchInstruction,
  type EventData,
  type ServedReceiptProof,
} from "@agent-market/program";

import { ed25519Sign, type AgentFixture, type OpenedEscrow, type TestMarket, type Wallet } from "@agent-market/tests/fixtures";

export function createReceiptLog(market: TestMarket, agent: AgentFixture): Promise<string> {
  return market.sendAsRelayer([createReceiptLogInstruction({ programId: market.programId, payer: market.relayer.publicKey, agent: agent.address })]);
}

export interface SettledBatch {
  signature: string;
  events: EventData<"EscrowSettledToLog">[];
}

/** Settles `escrows` of `agent` in one settle_batch, signed once over the batch digest. */
export async function settleBatch(market: TestMarket, agent: AgentFixture, escrows: readonly OpenedEscrow[], feeShardIndex = 0): Promise<SettledBatch> {
  const resultHashes = escrows.map((_, i) => outputHash({ summary: `Hi, ${i}.` }));
  const digests = escrows.map((escrow, i) => resultDigest(escrow.executionId, agent.address, escrow.requestHash, resultHashes[i]!));
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
      resultHashes,
      feeShardIndex,
    }),
  ]);
  const events = (await market.events(signature)).filter((event) => event.name === "EscrowSettledToLog").map((event) => event.data as unknown as EventData<"EscrowSettledToLog">);
  return { signature, events };
}

export const RECEIPT_PROOF_FIELDS = `receiptProof {
  leaf { executionId payer payerTokenAccount apiKeyId amountUsdc feeUsdc requestHash resultHash settledAt }
  leafHash leafIndex tree logRoot root treeLeaves proof
}`;

const hex = (value: string) => new Uint8Array(Buffer.from(value, "hex"));

/** The payer's open_dispute_from_log with the served leaf and proof, sent and confirmed. */
export function disputeFromLog(market: TestMarket, agent: AgentFixture, payer: Wallet, served: ServedReceiptProof): Promise<string> {
  const instruction = openDisputeFromLogInstruction({
    programId: market.programId,
    agent: agent.address,
    leaf: receiptLeafOf(served.leaf),
    leafIndex: BigInt(served.leafIndex),
    proof: served.proof.map(hex),
    evidenceHash: new Uint8Array(32).fill(9),
  });
  return market.send([instruction], [payer.wallet]);
}
