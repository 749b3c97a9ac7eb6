// Migration 0007 (metered pricing) over what the indexer stored before it: every call was
// fixed-price, so a settled execution was charged its whole amount and returned nothing, a refunded
// one returned it all. The stored events and leaves gain the same values, so a row rebuilt from
// them later equals the migrated one, and a leaf keeps the hash its log's roots commit to.
// Through yoga.fetch; no chain.
import { strict as assert } from "node:assert";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";

import { formatExecutionId, formatUsdc, receiptRootFromProof, splitPayment, type ServedReceiptProof } from "@agent-market/program";
import { createPool, dropDatabase, ensureDatabase, migrate, silentLogger } from "@agent-market/service";
import { Keypair } from "@solana/web3.js";

import { parseConfig } from "../src/config.js";
import { Tree } from "../src/graphql/receipt-trees.js";
import { createIndexer, type Indexer } from "../src/indexer.js";
import { PROOF_FIELDS } from "./batch-support.js";
import { databaseUrl, query } from "./support.js";

const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), "..", "migrations");
const AMOUNT = 250_000n;
const hex = (bytes: number) => randomBytes(bytes).toString("hex");

describe("migration 0007 (metered pricing) over stored fixed-price calls", function () {
  this.timeout(60_000);
  const url = databaseUrl();
  const config = parseConfig({
    INDEXER_NETWORK: "localnet",
    DEVNET_PROGRAM_ID: Keypair.generate().publicKey.toBase58(),
    INDEXER_DATABASE_URL: url,
    INDEXER_RPC_URL: "http://127.0.0.1:9",
    INDEXER_PORT: "0",
  });
  const s = config.schema;
  const agent = Keypair.generate().publicKey.toBase58();
  const payer = Keypair.generate().publicKey.toBase58();
  const payerTokenAccount = Keypair.generate().publicKey.toBase58();
  const settledBytes = randomBytes(16);
  const settledId = formatExecutionId(settledBytes);
  const refundedId = formatExecutionId(randomBytes(16));
  /** The leaf's hash under the formula before charged and returned were hashed: whatever it was, it stays. */
  const leafHash = hex(32);
  const tree = new Tree();
  tree.append([Buffer.from(leafHash, "hex")]);
  const logRoot = tree.root().toString("hex");
  const { creatorShareUsdc, feeUsdc } = splitPayment(AMOUNT);
  let indexer: Indexer | undefined;

  /** The events, rows and leaf the previous version stored for one settled and one refunded call. */
  async function storeBefore(): Promise<void> {
    const legacy = mkdtempSync(join(tmpdir(), "indexer-migrations-"));
    try {
      for (const name of readdirSync(MIGRATIONS).filter((file) => file < "0007")) copyFileSync(join(MIGRATIONS, name), join(legacy, name));
      const pool = createPool(url);
      try {
        await migrate(pool, { dir: legacy, history_table: `${s}.migrations`, lock: `migrate:${s}`, schema: s });
        const opened = (id: string) => ({ executionId: id, agent, nonce: "0", payer, payerTokenAccount, apiKeyId: null, amountUsdc: String(AMOUNT), requestHash: hex(32), usedIncludedCall: false, openedAt: "1800000000", deadline: "1800000300" });
        const leaf = { nonce: "0", payer, payerTokenAccount, apiKeyId: null, amountUsdc: String(AMOUNT), units: "3", requestHash: hex(32), resultHash: hex(32), settledAt: "1800000010" };
        const events: [string, number, string, string, Record<string, unknown>][] = [
          ["open1", 10, "EscrowOpened", settledId, opened(settledId)],
          ["settle1", 11, "EscrowSettledToLog", settledId, { ...leaf, executionId: settledId, agent, creatorShareUsdc: String(creatorShareUsdc), feeUsdc: String(feeUsdc), leafIndex: "0", logRoot, checkpoint: true }],
          ["open2", 12, "EscrowOpened", refundedId, opened(refundedId)],
          ["refund2", 13, "EscrowRefunded", refundedId, { executionId: refundedId, agent, payer, apiKeyId: null, amountUsdc: String(AMOUNT), reason: "CreatorError", refundedAt: "1800000020" }],
        ];
        for (const [signature, slot, name, id, data] of events) {
          await pool.query(`INSERT INTO ${s}.transactions (signature, slot, block_time, commitment) VALUES ($1, $2, 1800000000, 'finalized')`, [signature, slot]);
          await pool.query(
            `INSERT INTO ${s}.events (signature, instruction_index, inner_index, slot, block_time, commitment, name, execution_id, agent, fee_shard, data)
             VALUES ($1, 0, 0, $2, 1800000000, 'finalized', $3, $4, $5, $6, $7)`,
            [signature, slot, name, id, agent, name === "EscrowSettledToLog" ? 0 : null, data],
          );
        }
        const row = `INSERT INTO ${s}.executions (id, agent, payer, state, refund_reason, amount_usdc, creator_share_usdc, fee_usdc, fee_shard, used_included_call,
            opened_at, deadline, closed_at, open_signature, open_slot, close_signature, close_slot, activity_at, max_slot, commitment)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, false, 1800000000, 1800000300, $10, $11, $12, $13, $14, 1800000000, $14, 'finalized')`;
        await pool.query(row, [settledId, agent, payer, "settled", null, AMOUNT, creatorShareUsdc, feeUsdc, 0, 1800000010, "open1", 10, "settle1", 11]);
        await pool.query(row, [refundedId, agent, payer, "refunded", "CreatorError", AMOUNT, 0, 0, null, 1800000020, "open2", 12, "refund2", 13]);
        const served = { ...leaf, executionId: settledBytes.toString("hex"), apiKeyId: "00".repeat(16), feeUsdc: String(feeUsdc) };
        await pool.query(
          `INSERT INTO ${s}.receipt_leaves (agent, leaf_index, execution_id, nonce, leaf, leaf_hash, log_root, signature, checkpoint) VALUES ($1, 0, $2, 0, $3, $4, $5, 'settle1', true)`,
          [agent, settledId, served, leafHash, logRoot],
        );
      } finally {
        await pool.end();
      }
    } finally {
      rmSync(legacy, { recursive: true, force: true });
    }
  }

  before(async () => {
    await ensureDatabase(url);
    await storeBefore();
    indexer = await createIndexer(config, { ingest: false, logger: silentLogger });
  });
  after(async () => {
    await indexer?.close();
    await dropDatabase(url).catch(() => {});
  });

  const FIELDS = "state amount { usdc } pricePerUnit { usdc } maxUnits units charged { usdc } returned { usdc } creatorShare { usdc } fee { usdc }";

  it("charges a settled call its amount and returns a refunded one's, and serves the leaf with its hash and proof", async () => {
    const data = await query(
      indexer!,
      `query($settled: ID!, $refunded: ID!) {
        settled: execution(id: $settled) { ${FIELDS} receiptProof { ${PROOF_FIELDS} } }
        refunded: execution(id: $refunded) { ${FIELDS} }
      }`,
      { settled: settledId, refunded: refundedId },
    );
    const { receiptProof, ...settled } = data.settled;
    const usdc = (amount: bigint) => ({ usdc: formatUsdc(amount) });
    assert.deepEqual(settled, {
      state: "SETTLED",
      amount: usdc(AMOUNT),
      pricePerUnit: null,
      maxUnits: null,
      units: "3",
      charged: usdc(AMOUNT),
      returned: usdc(0n),
      creatorShare: usdc(creatorShareUsdc),
      fee: usdc(feeUsdc),
    });
    assert.deepEqual(data.refunded, { state: "REFUNDED", amount: usdc(AMOUNT), pricePerUnit: null, maxUnits: null, units: null, charged: usdc(0n), returned: usdc(AMOUNT), creatorShare: usdc(0n), fee: usdc(0n) });

    const proof = receiptProof as ServedReceiptProof;
    assert.deepEqual([proof.leaf.amountUsdc, proof.leaf.chargedUsdc, proof.leaf.returnedUsdc], [String(AMOUNT), String(AMOUNT), "0"]);
    assert.equal(proof.leafHash, leafHash, "the leaf keeps the hash it was stored with");
    const root = receiptRootFromProof(Buffer.from(proof.leafHash, "hex"), 0n, proof.proof.map((sibling) => Buffer.from(sibling, "hex")));
    assert.deepEqual([proof.root, Buffer.from(root).toString("hex")], [logRoot, logRoot]);
  });

  it("rebuilds the same amounts from the stored events when one of the execution's arrives", async () => {
    const columns = `price_per_unit_usdc, max_units, units, charged_usdc, returned_usdc, amount_usdc, creator_share_usdc, fee_usdc`;
    const read = async () => (await indexer!.pool.query(`SELECT id, ${columns} FROM ${s}.executions ORDER BY id`)).rows;
    const migrated = await read();
    const base = { signature: "dispute1", slot: 20, blockTime: 1_800_000_500 };
    await indexer!.store.ingest(
      [
        {
          ...base,
          blockhash: null,
          failed: false,
          events: [
            {
              ...base,
              instructionIndex: 0,
              innerIndex: 0,
              leafOffset: 0,
              name: "DisputeOpened",
              data: { executionId: settledId, agent, leafIndex: "0", payer, amountUsdc: String(AMOUNT), evidenceHash: hex(32), openedAt: "1800000500" },
              executionId: settledId,
              agent,
              feeShard: null,
            },
          ],
        },
      ],
      "confirmed",
    );
    assert.deepEqual(await read(), migrated);
    // No bucket was stored before: the rebuild moved the execution's contribution by (rebuilt − migrated).
    const { rows } = await indexer!.pool.query(`SELECT settled, spent_usdc, earned_usdc, fee_usdc, disputes_open FROM ${s}.buckets WHERE dimension = 'market' AND granularity = 'day'`);
    assert.deepEqual(rows, [{ settled: "0", spent_usdc: "0", earned_usdc: "0", fee_usdc: "0", disputes_open: "1" }]);
  });
});
