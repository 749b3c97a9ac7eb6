// Metered calls on a real localnet: each execution serves what its escrow held, its price per unit
// and maximum, the units settled and what they charged and returned; every figure (an agent's,
// a payer's usage, a creator's earnings, the market's) counts the charge, never the amount held;
// and the proof of a metered leaf verifies against the chain's receipt log and opens a dispute.
import { strict as assert } from "node:assert";

import { formatExecutionId, formatUsdc, requestHash, splitPayment, verifyLoggedReceipt, type ServedReceiptProof } from "@agent-market/program";

import { randomId, USDC, type OpenedEscrow } from "@agent-market/tests/fixtures";
import { backfill } from "../src/ingest/backfill.js";
import type { Indexer } from "../src/indexer.js";
import { reconcile } from "../src/reconcile.js";
import { disputeFromLog, PROOF_FIELDS, settleBatch } from "./batch-support.js";
import { quietIndexer, query, startEnv, stopEnv, type IndexerEnv } from "./support.js";

const PRICE_PER_UNIT = 1_000n;
const MAX_UNITS_PER_CALL = 500n;

const AMOUNT_FIELDS = "state amount { usdc } pricePerUnit { usdc } maxUnits units charged { usdc } returned { usdc } creatorShare { usdc } fee { usdc }";

async function execution(indexer: Indexer, escrow: OpenedEscrow, fields = AMOUNT_FIELDS): Promise<Record<string, any>> {
  return (await query(indexer, `query($id: ID!) { execution(id: $id) { ${fields} } }`, { id: formatExecutionId(escrow.executionId) })).execution;
}

/** What an execution serves of its amounts, as `AMOUNT_FIELDS` asks them. */
function amounts(held: bigint, settled: { units: bigint; charged: bigint } | "refunded" | "open") {
  const base = { amount: { usdc: formatUsdc(held) }, pricePerUnit: { usdc: formatUsdc(PRICE_PER_UNIT) }, maxUnits: String(held / PRICE_PER_UNIT) };
  if (settled === "open") return { ...base, state: "OPEN", units: null, charged: null, returned: null, creatorShare: { usdc: "0.000000" }, fee: { usdc: "0.000000" } };
  if (settled === "refunded") return { ...base, state: "REFUNDED", units: null, charged: { usdc: "0.000000" }, returned: { usdc: formatUsdc(held) }, creatorShare: { usdc: "0.000000" }, fee: { usdc: "0.000000" } };
  const split = splitPayment(settled.charged);
  return {
    ...base,
    state: "SETTLED",
    units: String(settled.units),
    charged: { usdc: formatUsdc(settled.charged) },
    returned: { usdc: formatUsdc(held - settled.charged) },
    creatorShare: { usdc: formatUsdc(split.creatorShareUsdc) },
    fee: { usdc: formatUsdc(split.feeUsdc) },
  };
}

describe("metered calls", function () {
  this.timeout(180_000);
  let env: IndexerEnv | undefined;

  before(async () => {
    env = await startEnv();
  });
  after(() => stopEnv(env));

  it("serves held, charged and returned per execution, counts the charge in every figure, and proves a metered leaf", async () => {
    const market = env!.market;
    const agent = await market.agent({ kind: "Metered", pricePerUnitUsdc: PRICE_PER_UNIT, maxUnitsPerCall: MAX_UNITS_PER_CALL });
    const payer = await market.payer(100n * USDC);
    const paidBefore = await market.usdc(payer.tokenAccount);
    const payoutBefore = await market.usdc(agent.payoutAccount);
    const fullHold = PRICE_PER_UNIT * MAX_UNITS_PER_CALL;

    // A caller maximum of 0.3005 USDC buys 300 whole units: the escrow holds 0.3 USDC.
    const cappedId = randomId();
    const cappedHash = requestHash("summarize", { text: "metered" });
    const cappedEscrow: OpenedEscrow = {
      executionId: cappedId,
      ref: market.escrowRef(agent, payer, cappedId),
      requestHash: cappedHash,
      signature: await market.sendAsRelayer([market.openEscrowInstruction(agent, payer, cappedId, cappedHash, 300_500n)]),
    };
    const partial = await market.openEscrow(agent, payer);
    const whole = await market.openEscrow(agent, payer);
    const refunded = await market.openEscrow(agent, payer);
    const open = await market.openEscrow(agent, payer);
    const batch = await settleBatch(market, agent, [cappedEscrow, partial, whole], 2, [120n, 7n, MAX_UNITS_PER_CALL]);
    await market.sendAsRelayer([market.refundInstruction(refunded, "CreatorError")]);
    const charges = [120n * PRICE_PER_UNIT, 7n * PRICE_PER_UNIT, fullHold];
    assert.deepEqual(
      batch.events.map((leaf) => [leaf.amountUsdc, leaf.chargedUsdc, leaf.returnedUsdc]),
      [
        [300_000n, charges[0], 300_000n - charges[0]!],
        [fullHold, charges[1], fullHold - charges[1]!],
        [fullHold, charges[2], 0n],
      ],
    );
    const charged = charges.reduce((sum, charge) => sum + charge, 0n);
    assert.equal(paidBefore - (await market.usdc(payer.tokenAccount)), charged + fullHold, "the payer paid the charges, and the open escrow holds the rest");

    const indexer = await quietIndexer(env!);
    try {
      await backfill(indexer.rpc, indexer.store);
      assert.deepEqual(await execution(indexer, cappedEscrow), amounts(300_000n, { units: 120n, charged: charges[0]! }));
      assert.deepEqual(await execution(indexer, partial), amounts(fullHold, { units: 7n, charged: charges[1]! }));
      assert.deepEqual(await execution(indexer, whole), amounts(fullHold, { units: MAX_UNITS_PER_CALL, charged: charges[2]! }));
      assert.deepEqual(await execution(indexer, refunded), amounts(fullHold, "refunded"));
      assert.deepEqual(await execution(indexer, open), amounts(fullHold, "open"));

      const split = charges.map(splitPayment);
      const earned = split.reduce((sum, part) => sum + part.creatorShareUsdc, 0n);
      const fees = split.reduce((sum, part) => sum + part.feeUsdc, 0n);
      const creator = agent.creator.wallet.publicKey.toBase58();
      const data = await query(
        indexer,
        `query($agent: String!, $payer: String!, $creator: String!) {
          agent(address: $agent) { stats(window: H24) { executions settled spent { usdc } earned { usdc } fees { usdc } } }
          payer: usage(dimension: PAYER, subject: $payer) { totals(window: D30) { spent { usdc } earned { usdc } fees { usdc } } }
          creatorUsage: usage(dimension: CREATOR, subject: $creator) { buckets(granularity: DAY) { spent { usdc } } }
          creator(address: $creator) { executionEarnings { usdc } }
          market { spent { usdc } fees { usdc } feeShards { index fees { usdc } } }
        }`,
        { agent: agent.address.toBase58(), payer: payer.wallet.publicKey.toBase58(), creator },
      );
      const money = (amount: bigint) => ({ usdc: formatUsdc(amount) });
      assert.deepEqual(data.agent.stats, { executions: 5, settled: 3, spent: money(charged), earned: money(earned), fees: money(fees) });
      assert.deepEqual(data.payer.totals, { spent: money(charged), earned: money(earned), fees: money(fees) });
      assert.deepEqual(data.creatorUsage.buckets.at(-1).spent, money(charged), "today's bucket");
      assert.deepEqual(data.creator.executionEarnings, money(earned));
      assert.deepEqual([data.market.spent, data.market.fees], [money(charged), money(fees)]);
      assert.deepEqual(data.market.feeShards.find((shard: { index: number }) => shard.index === 2).fees, money(fees));
      assert.equal((await market.usdc(agent.payoutAccount)) - payoutBefore, earned, "the creator was paid its share of the charges, no more");

      // The leaf carries what was held, charged and returned; its proof holds against the chain's log.
      const proof = (await execution(indexer, cappedEscrow, `receiptProof { ${PROOF_FIELDS} }`)).receiptProof as ServedReceiptProof & { agent: string };
      const fee = splitPayment(charges[0]!).feeUsdc;
      assert.deepEqual(
        [proof.leaf.amountUsdc, proof.leaf.chargedUsdc, proof.leaf.feeUsdc, proof.leaf.returnedUsdc, proof.leaf.units],
        ["300000", String(charges[0]), String(fee), String(300_000n - charges[0]!), "120"],
      );
      const check = await verifyLoggedReceipt(market.connection, { agent: proof.agent, receiptProof: proof }, { programId: market.programId });
      assert.ok(check.ok, check.detail);
      await disputeFromLog(market, agent, payer, proof);
      await backfill(indexer.rpc, indexer.store);
      const disputed = await query(indexer, `query($id: ID!) { execution(id: $id) { receiptProof { dispute { state amount { usdc } } } } }`, { id: formatExecutionId(cappedEscrow.executionId) });
      assert.deepEqual(disputed.execution.receiptProof.dispute, { state: "OPEN", amount: money(charges[0]!) }, "a dispute is of what was charged");

      const result = await reconcile(indexer.rpc, indexer.pool, indexer.config.schema, indexer.config.program_id);
      assert.deepEqual(result.differences, []);
    } finally {
      await indexer.close();
    }
  });
});
