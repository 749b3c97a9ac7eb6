// Leaves and disputes keyed by (agent, leaf index), from events handed to the store as the decoder
// writes them: an execution id opened twice settles into two leaves, both served, neither
// shadowing the other, and the proof of every leaf of the tree leads to the root the chain would
// record; a leaf's dispute is its own, and a dropped transaction takes its leaf and dispute with it.
// Through yoga.fetch; no chain (tests/indexer receipt-log.test.ts does the same on localnet).
import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { formatExecutionId, receiptRootFromProof, splitPayment, type ServedReceiptProof } from "@agent-market/program";
import { dropDatabase, ensureDatabase, silentLogger } from "@agent-market/service";
import { Keypair } from "@solana/web3.js";

import { parseConfig } from "../src/config.js";
import { Tree } from "../src/graphql/receipt-trees.js";
import { createIndexer, type Indexer } from "../src/indexer.js";
import type { DecodedTransaction, JsonValue, StoredEvent } from "../src/ingest/event-row.js";
import { leafRowOf } from "../src/ingest/receipt-leaf.js";
import { PROOF_FIELDS } from "./batch-support.js";
import { databaseUrl, graphql, query } from "./support.js";

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const AMOUNT = 250_000n;

describe("leaves and disputes by (agent, leaf index)", function () {
  this.timeout(60_000);
  const url = databaseUrl();
  const programId = Keypair.generate().publicKey;
  const agent = Keypair.generate().publicKey.toBase58();
  const payer = Keypair.generate().publicKey.toBase58();
  const payerTokenAccount = Keypair.generate().publicKey.toBase58();
  let indexer: Indexer;
  let slot = 100;

  before(async () => {
    await ensureDatabase(url);
    const config = parseConfig({
      INDEXER_NETWORK: "localnet",
      DEVNET_PROGRAM_ID: programId.toBase58(),
      INDEXER_DATABASE_URL: url,
      INDEXER_RPC_URL: "http://127.0.0.1:9",
      INDEXER_PORT: "0",
    });
    indexer = await createIndexer(config, { ingest: false, logger: silentLogger });
  });
  after(async () => {
    await indexer?.close();
    await dropDatabase(url).catch(() => {});
  });

  /** A transaction of these events, at the next slot. */
  function transaction(events: { name: string; executionId: string; data: Record<string, JsonValue> }[]): DecodedTransaction {
    slot += 1;
    const signature = `sig${slot}${hex(8)}`;
    const base = { signature, slot, blockTime: 1_800_000_000 + slot };
    return {
      ...base,
      blockhash: null,
      failed: false,
      events: events.map(({ name, executionId, data }, innerIndex): StoredEvent => ({
        ...base,
        instructionIndex: 0,
        innerIndex,
        leafOffset: 0,
        name,
        data: { ...data, executionId, agent },
        executionId,
        agent,
        feeShard: name === "EscrowSettledToLog" ? 0 : null,
      })),
    };
  }

  const tree = new Tree();
  let nonce = 0n;

  /** An escrow of `id` opened, and the transaction settling it into the next leaf. */
  function openAndSettle(id: string): { opened: DecodedTransaction; settled: DecodedTransaction; leafIndex: number } {
    const escrowNonce = String(nonce++);
    const opened = transaction([
      {
        name: "EscrowOpened",
        executionId: id,
        data: { nonce: escrowNonce, payer, payerTokenAccount, apiKeyId: null, amountUsdc: String(AMOUNT), pricePerUnitUsdc: "0", maxUnits: "0", requestHash: hex(32), usedIncludedCall: false, openedAt: "1800000000", deadline: "1800000300" },
      },
    ]);
    const { feeUsdc, creatorShareUsdc } = splitPayment(AMOUNT);
    const leafIndex = tree.count;
    const data: Record<string, JsonValue> = {
      executionId: id,
      agent,
      nonce: escrowNonce,
      payer,
      payerTokenAccount,
      apiKeyId: null,
      amountUsdc: String(AMOUNT),
      chargedUsdc: String(AMOUNT),
      returnedUsdc: "0",
      creatorShareUsdc: String(creatorShareUsdc),
      feeUsdc: String(feeUsdc),
      units: "0",
      requestHash: hex(32),
      resultHash: hex(32),
      settledAt: String(1_800_000_010 + leafIndex),
      leafIndex: String(leafIndex),
    };
    tree.append([Buffer.from(leafRowOf("", { ...data, logRoot: "" }).leaf_hash, "hex")]);
    const settled = transaction([{ name: "EscrowSettledToLog", executionId: id, data: { ...data, logRoot: tree.root().toString("hex") } }]);
    return { opened, settled, leafIndex };
  }

  const proofAt = async (leafIndex: number) =>
    (await query(indexer, `query($agent: String!, $i: String!) { receiptProof(agent: $agent, leafIndex: $i) { ${PROOF_FIELDS} dispute { executionId state closed } } }`, { agent, i: String(leafIndex) }))
      .receiptProof as (ServedReceiptProof & { agent: string; dispute: { executionId: string; state: string; closed: boolean } | null }) | null;

  it("serves both leaves of an id opened twice, and every proof of the tree leads to the newest root", async () => {
    const reused = formatExecutionId(randomBytes(16));
    const steps = [openAndSettle(formatExecutionId(randomBytes(16))), openAndSettle(reused), openAndSettle(reused), openAndSettle(formatExecutionId(randomBytes(16)))];
    await indexer.store.ingest(steps.flatMap(({ opened, settled }) => [opened, settled]), "confirmed");

    const data = await query(indexer, `query($id: ID!) { execution(id: $id) { state receiptProof { leafIndex } receiptProofs { leafIndex leaf { nonce } } } }`, { id: reused });
    assert.equal(data.execution.state, "SETTLED");
    assert.deepEqual(data.execution.receiptProofs, [
      { leafIndex: "1", leaf: { nonce: "1" } },
      { leafIndex: "2", leaf: { nonce: "2" } },
    ]);
    assert.deepEqual(data.execution.receiptProof, { leafIndex: "2" }, "the execution's own leaf is its latest settlement's");

    for (let leafIndex = 0; leafIndex < 4; leafIndex++) {
      const proof = (await proofAt(leafIndex))!;
      assert.deepEqual([proof.agent, proof.leafIndex, proof.treeLeaves, proof.root], [agent, String(leafIndex), 4, tree.root().toString("hex")]);
      const root = receiptRootFromProof(Buffer.from(proof.leafHash, "hex"), BigInt(leafIndex), proof.proof.map((sibling) => Buffer.from(sibling, "hex")));
      assert.equal(Buffer.from(root).toString("hex"), tree.root().toString("hex"), `leaf ${leafIndex}`);
    }
    assert.equal(await proofAt(4), null, "no such leaf");
    const bad = await graphql(indexer, `{ receiptProof(agent: "${agent}", leafIndex: "-1") { leafIndex } }`);
    assert.equal(bad.errors?.[0]?.extensions?.code, "BAD_USER_INPUT");
  });

  it("keeps each leaf's dispute its own, through resolution and close, and drops one with its transaction", async () => {
    const [first, second] = [(await proofAt(1))!, (await proofAt(2))!];
    const id = first.leaf.executionId;
    const executionId = formatExecutionId(Buffer.from(id, "hex"));
    const disputeEvent = (name: string, leafIndex: string, extra: Record<string, JsonValue>) => ({ name, executionId, data: { leafIndex, payer, ...extra } });
    const openedBoth = transaction([
      disputeEvent("DisputeOpened", first.leafIndex, { amountUsdc: String(AMOUNT), evidenceHash: "01".repeat(32), openedAt: "1800000500" }),
      disputeEvent("DisputeOpened", second.leafIndex, { amountUsdc: String(AMOUNT), evidenceHash: "02".repeat(32), openedAt: "1800000501" }),
    ]);
    const resolvedFirst = transaction([disputeEvent("DisputeResolved", first.leafIndex, { upheld: true, slashedUsdc: "1000", resolvedAt: "1800000600" })]);
    const closedFirst = transaction([disputeEvent("DisputeClosed", first.leafIndex, {})]);
    await indexer.store.ingest([openedBoth, resolvedFirst, closedFirst], "confirmed");
    assert.deepEqual((await proofAt(1))!.dispute, { executionId, state: "UPHELD", closed: true });
    assert.deepEqual((await proofAt(2))!.dispute, { executionId, state: "OPEN", closed: false });
    assert.equal((await proofAt(0))!.dispute, null);

    // A fork drops the resolution and the close: the first dispute is open again, the second untouched.
    await indexer.store.drop([resolvedFirst.signature, closedFirst.signature]);
    assert.deepEqual((await proofAt(1))!.dispute, { executionId, state: "OPEN", closed: false });
    assert.deepEqual((await proofAt(2))!.dispute, { executionId, state: "OPEN", closed: false });

    // Finalized once every event of the dispute is.
    await indexer.store.promote([openedBoth.signature]);
    const { rows } = await indexer.pool.query(`SELECT leaf_index, commitment FROM ${indexer.config.schema}.disputes ORDER BY leaf_index`);
    assert.deepEqual(rows.map((row) => [String(row.leaf_index), row.commitment]), [["1", "finalized"], ["2", "finalized"]]);
  });
});
