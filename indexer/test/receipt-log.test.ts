// Settlement into the receipt log: executions settled by settle_batch (in batches or alone, as a
// batch of one) count to the unit, the proof `Execution.receiptProof` serves is accepted on chain
// by open_dispute, also after more batches of the same agent, and an execution id opened again
// settles into a second leaf that shadows none: both are served, and every proof of the tree holds.
import { strict as assert } from "node:assert";

import {
  feeShardPda,
  fetchReceiptLog,
  integerConstant,
  receiptLogPda,
  formatExecutionId,
  formatUsdc,
  FEE_SHARD_COUNT,
  requestHash,
  settledLeaves,
  verifyLoggedReceipt,
  type ServedReceiptProof,
} from "@agent-market/program";
import pg from "pg";

import { backfill } from "../src/ingest/backfill.js";
import { channelOf, type ChangeNotice } from "../src/ingest/change-notice.js";
import type { Indexer } from "../src/indexer.js";
import { reconcile } from "../src/reconcile.js";
import type { AgentFixture, OpenedEscrow, Wallet } from "@agent-market/tests/fixtures";
import { disputeFromLog, PROOF_FIELDS, RECEIPT_PROOF_FIELDS, settleBatch, type SettledBatch } from "./batch-support.js";
import { transactionDecoder, type RawTransaction } from "../src/ingest/decoder.js";
import { graphql, decoderOf, quietIndexer, query, rawTransaction, startEnv, stopEnv, waitFor, type IndexerEnv } from "./support.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const RECEIPT_CHECKPOINT_SECS = Number(integerConstant("RECEIPT_CHECKPOINT_SECS"));

/** The settlements of the whole chain, read again from the program's signatures: both kinds. */
async function chainSettlements(indexer: Indexer): Promise<{ count: number; spent: bigint; earned: bigint; fees: bigint; byShard: bigint[] }> {
  const decode = transactionDecoder(indexer.config.program_id);
  const signatures: string[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await indexer.rpc.getSignaturesForAddress(indexer.config.program_id.toBase58(), { before, limit: 1000 });
    signatures.push(...page.filter((info) => !info.err).map((info) => info.signature));
    if (page.length < 1000) break;
    before = page[page.length - 1]!.signature;
  }
  const totals = { count: 0, spent: 0n, earned: 0n, fees: 0n, byShard: Array.from({ length: FEE_SHARD_COUNT }, () => 0n) };
  for (const raw of await indexer.rpc.getTransactions(signatures)) {
    for (const event of raw ? decode(raw).events : []) {
      if (event.name !== "EscrowSettledToLog") continue;
      totals.count += 1;
      totals.spent += BigInt(String(event.data.chargedUsdc));
      totals.earned += BigInt(String(event.data.creatorShareUsdc));
      totals.fees += BigInt(String(event.data.feeUsdc));
      totals.byShard[event.feeShard!]! += BigInt(String(event.data.feeUsdc));
    }
  }
  return totals;
}

const EXECUTION_FIELDS = `state amount { usdc } creatorShare { usdc } fee { usdc } feeShard closedAt closeTransaction { signature } dispute { state } ${RECEIPT_PROOF_FIELDS}`;

async function execution(indexer: Indexer, escrow: OpenedEscrow): Promise<Record<string, any>> {
  const data = await query(indexer, `query($id: ID!) { execution(id: $id) { ${EXECUTION_FIELDS} } }`, { id: formatExecutionId(escrow.executionId) });
  return data.execution;
}

async function openMany(env: IndexerEnv, agent: AgentFixture, payer: Wallet, count: number): Promise<OpenedEscrow[]> {
  const escrows: OpenedEscrow[] = [];
  for (let i = 0; i < count; i++) escrows.push(await env.market.openEscrow(agent, payer));
  return escrows;
}

describe("batched settlement", function () {
  this.timeout(300_000);
  let env: IndexerEnv | undefined;
  const decodeTransaction = (raw: RawTransaction) => decoderOf(env)(raw);

  before(async () => {
    env = await startEnv();
  });
  after(() => stopEnv(env));

  it("counts a batch like settlements to the unit and serves a proof open_dispute accepts", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(100_000_000n);
    const payoutBefore = await market.usdc(agent.payoutAccount);
    const escrows = await openMany(env!, agent, payer, 5);
    const batch = await settleBatch(market, agent, escrows.slice(0, 4), 1);
    assert.equal(batch.events.length, 4);

    const indexer = await quietIndexer(env!, { schema: "indexer_batch_counts" });
    const listener = new pg.Client({ connectionString: env!.databaseUrl });
    // The database is dropped with its connections at the end: a listener still open must not end the process.
    listener.on("error", () => {});
    try {
      await listener.connect();
      const noticed = new Set<string>();
      listener.on("notification", (message) => {
        for (const [id] of (JSON.parse(message.payload ?? "{}") as ChangeNotice).executions ?? []) noticed.add(id);
      });
      await listener.query(`LISTEN "${channelOf(indexer.config.schema)}"`);
      await backfill(indexer.rpc, indexer.store);
      // Live subscriptions learn of each batched execution from the change feed, as of a settle.
      await waitFor("a change notice per batched execution", async () => batch.events.every((event) => noticed.has(formatExecutionId(event.executionId))), 5_000);
      let spent = 0n;
      let earned = 0n;
      let fees = 0n;
      for (const event of batch.events) {
        spent += event.chargedUsdc;
        earned += event.creatorShareUsdc;
        fees += event.feeUsdc;
        assert.equal(event.creatorShareUsdc, event.chargedUsdc - event.feeUsdc);
      }
      assert.equal((await market.usdc(agent.payoutAccount)) - payoutBefore, earned, "the events say what the creator was paid");

      const data = await query(
        indexer,
        `query($agent: String!, $creator: String!) {
          agent(address: $agent) { stats(window: H24) { executions settled open spent { usdc } earned { usdc } fees { usdc } latencySlots { samples } } }
          usage(dimension: CREATOR, subject: $creator) { totals(window: D30) { executions settled earned { usdc } } }
          market { executions spent { usdc } fees { usdc } feeShards { index fees { usdc } } }
        }`,
        { agent: agent.address.toBase58(), creator: agent.creator.wallet.publicKey.toBase58() },
      );
      assert.deepEqual(data.agent.stats, {
        executions: 5,
        settled: 4,
        open: 1,
        spent: { usdc: formatUsdc(spent) },
        earned: { usdc: formatUsdc(earned) },
        fees: { usdc: formatUsdc(fees) },
        latencySlots: { samples: 4 },
      });
      assert.deepEqual(data.usage.totals, { executions: 5, settled: 4, earned: { usdc: formatUsdc(earned) } });
      const chain = await chainSettlements(indexer);
      assert.equal(data.market.spent.usdc, formatUsdc(chain.spent));
      assert.equal(data.market.fees.usdc, formatUsdc(chain.fees));
      for (const shard of data.market.feeShards) {
        assert.equal(shard.fees.usdc, formatUsdc(chain.byShard[shard.index]!), `shard ${shard.index}`);
        assert.equal(shard.fees.usdc, formatUsdc(await market.usdc(feeShardPda(shard.index, market.programId))), `shard ${shard.index} holds its fees`);
      }

      const event = batch.events[1]!;
      const row = await execution(indexer, escrows[1]!);
      const proof = row.receiptProof as ServedReceiptProof;
      assert.deepEqual(
        { state: row.state, amount: row.amount.usdc, creatorShare: row.creatorShare.usdc, fee: row.fee.usdc, feeShard: row.feeShard, close: row.closeTransaction.signature },
        { state: "SETTLED", amount: formatUsdc(event.amountUsdc), creatorShare: formatUsdc(event.creatorShareUsdc), fee: formatUsdc(event.feeUsdc), feeShard: 1, close: batch.signature },
      );
      assert.equal(row.closedAt, new Date(Number(event.settledAt) * 1000).toISOString());
      assert.equal((proof as ServedReceiptProof & { agent: string }).agent, agent.address.toBase58());
      assert.deepEqual(proof.leaf, {
        executionId: hex(event.executionId),
        nonce: String(event.nonce),
        payer: event.payer.toBase58(),
        payerTokenAccount: event.payerTokenAccount.toBase58(),
        apiKeyId: hex(event.apiKeyId),
        amountUsdc: String(event.amountUsdc),
        chargedUsdc: String(event.chargedUsdc),
        feeUsdc: String(event.feeUsdc),
        returnedUsdc: "0",
        units: "1",
        requestHash: hex(event.requestHash),
        resultHash: hex(event.resultHash),
        settledAt: String(event.settledAt),
      });
      assert.equal(proof.leafIndex, String(event.leafIndex));
      assert.equal(proof.tree, 0);
      assert.equal(proof.logRoot, hex(event.logRoot));
      assert.equal(proof.root, proof.logRoot, "no batch came after: the current root is its batch's");
      assert.equal(proof.treeLeaves, 4);
      assert.equal(proof.proof.length, 18);
      assert.equal((await execution(indexer, escrows[4]!)).receiptProof, null, "an open execution has no leaf");

      await disputeFromLog(market, agent, payer, proof);
      await backfill(indexer.rpc, indexer.store);
      assert.deepEqual((await execution(indexer, escrows[1]!)).dispute, { state: "OPEN" });

      const result = await reconcile(indexer.rpc, indexer.pool, indexer.config.schema, indexer.config.program_id);
      assert.deepEqual(result.differences, []);
    } finally {
      await listener.end();
      await indexer.close();
    }
  });

  it("keeps a proof served before more batches valid, against the newest checkpoint covering its leaf, else the current root", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(100_000_000n);
    const first = await openMany(env!, agent, payer, 2);
    const checkpointed = await settleBatch(market, agent, first);
    assert.equal(checkpointed.events[0]!.checkpoint, true, "a log's first root is a checkpoint");
    const indexer = await quietIndexer(env!, { schema: "indexer_batch_proofs" });
    try {
      await backfill(indexer.rpc, indexer.store);
      const early = (await execution(indexer, first[0]!)).receiptProof as ServedReceiptProof;
      assert.equal(early.treeLeaves, 2);

      // Three more batches within the minute: none is a checkpoint.
      const later: SettledBatch[] = [];
      let last: OpenedEscrow[] = [];
      for (let i = 0; i < 3; i++) later.push(await settleBatch(market, agent, (last = await openMany(env!, agent, payer, 2))));
      assert.deepEqual(later.map((batch) => batch.events[0]!.checkpoint), [false, false, false]);
      await backfill(indexer.rpc, indexer.store);
      const covered = (await execution(indexer, first[1]!)).receiptProof as ServedReceiptProof;
      assert.equal(covered.treeLeaves, 2, "the first batch's checkpoint covers the leaf");
      assert.equal(covered.root, early.root);
      const newest = (await execution(indexer, last[1]!)).receiptProof as ServedReceiptProof;
      assert.equal(newest.treeLeaves, 8, "a leaf newer than every checkpoint: the current root");
      assert.equal(newest.root, hex(later[2]!.events[1]!.logRoot));
      assert.equal(covered.logRoot, early.logRoot, "its batch's root does not change");

      // The proof served three batches ago still leads to a root the log keeps.
      await disputeFromLog(market, agent, payer, early);
      await disputeFromLog(market, agent, payer, newest);
      await backfill(indexer.rpc, indexer.store);
      assert.deepEqual((await execution(indexer, first[0]!)).dispute, { state: "OPEN" });
    } finally {
      await indexer.close();
    }
  });

  it("refuses a proof while a leaf of the tree is missing, and rebuilds a kept tree a dropped batch changed", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(100_000_000n);
    const first = await openMany(env!, agent, payer, 2);
    const firstBatch = await settleBatch(market, agent, first);
    const second = await openMany(env!, agent, payer, 2);
    const secondBatch = await settleBatch(market, agent, second);
    const indexer = await quietIndexer(env!, { schema: "indexer_batch_gaps" });
    const ingest = async (signature: string) => indexer.store.ingest([decodeTransaction(await rawTransaction(market, signature))], "confirmed");
    try {
      // The second batch without the first: its leaves 2 and 3 have no leaves 0 and 1 to stand on.
      await ingest(secondBatch.signature);
      const answer = await graphql(indexer, `query($id: ID!) { execution(id: $id) { state receiptProof { root } } }`, { id: formatExecutionId(second[0]!.executionId) });
      assert.equal(answer.errors?.[0]?.extensions?.code, "RECEIPT_LOG_INCOMPLETE");
      assert.equal(answer.data?.execution.state, "SETTLED", "the execution itself is counted meanwhile");

      await ingest(firstBatch.signature);
      const whole = (await execution(indexer, second[0]!)).receiptProof as ServedReceiptProof;
      assert.deepEqual([whole.treeLeaves, whole.root], [4, hex(secondBatch.events[0]!.logRoot)]);

      // The kept tree of 4 leaves loses the second batch: the next proof is against the first's root.
      await indexer.store.drop([secondBatch.signature]);
      const after = (await execution(indexer, first[1]!)).receiptProof as ServedReceiptProof;
      assert.deepEqual([after.treeLeaves, after.root], [2, hex(firstBatch.events[1]!.logRoot)]);
    } finally {
      await indexer.close();
    }
  });

  it("counts lone settlements (batches of one) and batches together, each a leaf with its proof", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(100_000_000n);
    const single = await openMany(env!, agent, payer, 2);
    for (const escrow of single) await market.settle(escrow, agent, 2);
    const batched = await openMany(env!, agent, payer, 3);
    const batch = await settleBatch(market, agent, batched, 2);
    const refunded = await market.openEscrow(agent, payer);
    await market.sendAsRelayer([market.refundInstruction(refunded, "CreatorError")]);

    const indexer = await quietIndexer(env!, { schema: "indexer_batch_mixed" });
    try {
      await backfill(indexer.rpc, indexer.store);
      let spent = 0n;
      let earned = 0n;
      let fees = 0n;
      for (const escrow of single) {
        const [data] = settledLeaves(await market.events((await execution(indexer, escrow)).closeTransaction.signature));
        spent += data.chargedUsdc;
        earned += data.creatorShareUsdc;
        fees += data.feeUsdc;
      }
      for (const event of batch.events) {
        spent += event.chargedUsdc;
        earned += event.creatorShareUsdc;
        fees += event.feeUsdc;
      }
      const data = await query(
        indexer,
        `query($agent: String!) {
          agent(address: $agent) { stats(window: H24) { executions settled refunded { total } successRate spent { usdc } earned { usdc } fees { usdc } } }
          market { executions spent { usdc } fees { usdc } feeShards { index fees { usdc } } }
        }`,
        { agent: agent.address.toBase58() },
      );
      assert.deepEqual(data.agent.stats, {
        executions: 6,
        settled: 5,
        refunded: { total: 1 },
        successRate: 5 / 6,
        spent: { usdc: formatUsdc(spent) },
        earned: { usdc: formatUsdc(earned) },
        fees: { usdc: formatUsdc(fees) },
      });
      const chain = await chainSettlements(indexer);
      assert.equal(data.market.spent.usdc, formatUsdc(chain.spent));
      assert.equal(data.market.fees.usdc, formatUsdc(chain.fees));
      assert.deepEqual(
        data.market.feeShards.map((shard: { fees: { usdc: string } }) => shard.fees.usdc),
        await Promise.all(chain.byShard.map(async (_, index) => formatUsdc(await market.usdc(feeShardPda(index, market.programId))))),
        "each shard's fees are what it holds",
      );

      const lone = await execution(indexer, single[0]!);
      assert.equal(lone.state, "SETTLED");
      assert.equal(lone.receiptProof.leafIndex, "0");
      const batchedRow = await execution(indexer, batched[2]!);
      assert.equal(batchedRow.receiptProof.treeLeaves, 5);
      assert.equal(batchedRow.receiptProof.leafIndex, "4");

      const result = await reconcile(indexer.rpc, indexer.pool, indexer.config.schema, indexer.config.program_id);
      assert.deepEqual(result.differences, []);
    } finally {
      await indexer.close();
    }
  });

  it("serves both leaves of an execution id opened twice, by (agent, leaf index), and every proof of the tree verifies on chain", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(100_000_000n);
    const before = await openMany(env!, agent, payer, 1);
    await settleBatch(market, agent, before);
    // One id, two escrows: opened, settled, opened again once closed, settled again.
    const reused = await market.openEscrow(agent, payer);
    const first = await settleBatch(market, agent, [reused]);
    const hash = requestHash("summarize", { text: "Hello, world!" });
    await market.sendAsRelayer([market.openEscrowInstruction(agent, payer, reused.executionId, hash)]);
    const second = await settleBatch(market, agent, [reused]);
    const after = await openMany(env!, agent, payer, 1);
    await settleBatch(market, agent, after);
    assert.notEqual(first.events[0]!.nonce, second.events[0]!.nonce, "each open of the id is its own escrow");

    const indexer = await quietIndexer(env!, { schema: "indexer_batch_reused_id" });
    try {
      await backfill(indexer.rpc, indexer.store);
      const id = formatExecutionId(reused.executionId);
      const data = await query(indexer, `query($id: ID!) { execution(id: $id) { receiptProof { leafIndex } receiptProofs { ${PROOF_FIELDS} } } }`, { id });
      const proofs = data.execution.receiptProofs as ServedReceiptProof[];
      assert.deepEqual(
        proofs.map((proof) => [proof.leafIndex, proof.leaf.executionId, proof.leaf.nonce]),
        [first, second].map((batch) => [String(batch.events[0]!.leafIndex), hex(reused.executionId), String(batch.events[0]!.nonce)]),
      );
      assert.equal(data.execution.receiptProof.leafIndex, String(second.events[0]!.leafIndex), "the execution's own leaf is its latest settlement's");

      // Every leaf of the tree, the reused id's two among them, by (agent, leaf index): each proof
      // leads to a root the receipt log holds on chain.
      for (let leafIndex = 0; leafIndex < 4; leafIndex++) {
        const served = (
          await query(indexer, `query($agent: String!, $leafIndex: String!) { receiptProof(agent: $agent, leafIndex: $leafIndex) { ${PROOF_FIELDS} } }`, {
            agent: agent.address.toBase58(),
            leafIndex: String(leafIndex),
          })
        ).receiptProof as ServedReceiptProof & { agent: string };
        // The log's first batch is its checkpoint: leaf 0's proof leads to it, the others' to the current root.
        assert.equal(served.treeLeaves, leafIndex < before.length ? before.length : 4);
        const check = await verifyLoggedReceipt(market.connection, { agent: served.agent, receiptProof: served }, { programId: market.programId });
        assert.ok(check.ok, `leaf ${leafIndex}: ${check.detail}`);
      }

      // Each leaf is disputable on its own: the first's dispute is not the second's.
      await disputeFromLog(market, agent, payer, proofs[0]!);
      await disputeFromLog(market, agent, payer, proofs[1]!);
      await backfill(indexer.rpc, indexer.store);
      const disputes = await query(indexer, `query($id: ID!) { execution(id: $id) { receiptProofs { leafIndex dispute { executionId state closed } } } }`, { id });
      assert.deepEqual(
        disputes.execution.receiptProofs.map((proof: { leafIndex: string; dispute: unknown }) => [proof.leafIndex, proof.dispute]),
        proofs.map((proof) => [proof.leafIndex, { executionId: id, state: "OPEN", closed: false }]),
      );
      const result = await reconcile(indexer.rpc, indexer.pool, indexer.config.schema, indexer.config.program_id);
      assert.deepEqual(result.differences, []);
    } finally {
      await indexer.close();
    }
  });

  // Last: it moves the chain's clock.
  it("opens a dispute with a proof served minutes earlier, at a busy agent's batch a second, against its checkpoint", async () => {
    const market = env!.market;
    const agent = await market.agent();
    const payer = await market.payer(200_000_000n);
    const settleOne = async () => {
      const [escrow] = await openMany(env!, agent, payer, 1);
      return { escrow: escrow!, batch: await settleBatch(market, agent, [escrow!]) };
    };
    assert.equal((await settleOne()).batch.events[0]!.checkpoint, true);
    await market.localnet.advanceClock({ seconds: 1 });
    const disputed = await settleOne();
    assert.equal(disputed.batch.events[0]!.checkpoint, false, "a second later: no checkpoint");
    await market.localnet.advanceClock({ seconds: RECEIPT_CHECKPOINT_SECS });
    assert.equal((await settleOne()).batch.events[0]!.checkpoint, true, "a minute later: the next checkpoint, which covers the disputed leaf");
    const indexer = await quietIndexer(env!, { schema: "indexer_checkpoint_proofs" });
    try {
      await backfill(indexer.rpc, indexer.store);
      const served = (await execution(indexer, disputed.escrow)).receiptProof as ServedReceiptProof;
      assert.equal(served.treeLeaves, 3);
      // 70 more batches, one a second: more than the 64 recent roots, across one more checkpoint.
      for (let second = 0; second < 70; second++) {
        await market.localnet.advanceClock({ seconds: 1 });
        await settleOne();
      }
      const log = (await fetchReceiptLog(market.connection, receiptLogPda(agent.address, market.programId), { programId: market.programId }))!;
      const roots = (held: Uint8Array[]) => held.map((root) => hex(root));
      assert.ok(!roots(log.recentRoots).includes(served.root), "no recent root is the served one any more");
      assert.ok(roots(log.checkpointRoots).includes(served.root), "a checkpoint is");
      assert.equal(log.checkpointCount, 3n);
      await disputeFromLog(market, agent, payer, served);
      await backfill(indexer.rpc, indexer.store);
      assert.deepEqual((await execution(indexer, disputed.escrow)).dispute, { state: "OPEN" });
    } finally {
      await indexer.close();
    }
  });
});
