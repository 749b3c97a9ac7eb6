// An execution settled into its agent's receipt log (settle_batch), for the dashboard's dispute
// tests while the relayer settles by `settle`: the escrow opened and settled on chain with the
// test market's keys, and the relayer's row written as its batch path records one.
import { fetchAgent, fetchLoggedReceipt, formatExecutionId } from "@agent-market/program";

import { createReceiptLog, settleBatch, type SettledBatch } from "../../indexer/test/batch-support.js";
import type { AgentFixture, OpenedEscrow, Wallet } from "../../tests/src/fixtures.js";
import type { ListedAgent } from "../../tests/src/marketplace.js";
import { waitFor, type Stack } from "./stack.js";

/** The listed agent as the chain fixtures take it, its receipt log created. */
export async function withReceiptLog(stack: Stack, agent: ListedAgent): Promise<AgentFixture> {
  const onChain = (await fetchAgent(stack.market.connection, agent.address))!;
  const fixture = { agentId: onChain.agentId, address: agent.address, signing: agent.server.signing, payoutAccount: onChain.payoutAccount, creator: agent.creator, signature: "" };
  await createReceiptLog(stack.market, fixture);
  return fixture;
}

export interface LogSettled {
  id: string;
  escrow: OpenedEscrow;
  batch: SettledBatch;
}

/**
 * An execution of `payer` settled by settle_batch, in the relayer's database like `template` (an
 * execution the relayer ran for the same key and agent) with settle_tx naming the batch, and
 * served by the indexer with its receipt proof.
 */
export async function settleToLog(stack: Stack, agent: AgentFixture, payer: Wallet, template: string): Promise<LogSettled> {
  const escrow = await stack.market.openEscrow(agent, payer);
  const batch = await settleBatch(stack.market, agent, [escrow]);
  const id = formatExecutionId(escrow.executionId);
  await stack.relayer.services.db.query(
    `INSERT INTO executions (id, api_key_id, wallet, network, agent, mode, state, task, parameters, request_hash, payer_token_account,
                             quoted_usdc, amount_usdc, settle_tx)
     SELECT $1, api_key_id, wallet, network, agent, mode, 'settled', task, parameters, $2, payer_token_account,
            quoted_usdc, $3, $4::jsonb FROM executions WHERE id = $5`,
    [id, Buffer.from(escrow.requestHash), batch.events[0]!.amountUsdc.toString(), JSON.stringify({ signature: batch.signature }), template],
  );
  await waitFor(`${id}'s receipt proof in the indexer`, async () => (await fetchLoggedReceipt(stack.graphqlUrl, id)) !== null);
  return { id, escrow, batch };
}
