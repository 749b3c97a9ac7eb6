// Reconciliation, indexer against chain: every event the chain has for the program (read again
// from scratch with getSignaturesForAddress and getTransaction) must be stored once with the same
// data, nothing else may be stored, each execution's row must equal the one its chain events
// give, and each receipt log leaf the one its EscrowSettledToLog gives. Compared up to the slot both sides have seen, so an in-flight transaction is no difference.
import { canonicalJson } from "@agent-market/program";
import type { Pool } from "@agent-market/service";
import type { PublicKey } from "@solana/web3.js";

import { transactionDecoder } from "./ingest/decoder.js";
import type { StoredEvent } from "./ingest/event-row.js";
import { executionFromEvents, type EventRecord } from "./ingest/execution-view.js";
import { leafRowOf } from "./ingest/receipt-leaf.js";
import type { SolanaRpc } from "./ingest/rpc.js";

export interface Difference {
  kind: "missing_event" | "extra_event" | "event_data" | "execution" | "leaf";
  key: string;
  detail: string;
}

const keyOf = (signature: string, instruction: number, inner: number, leafOffset: number) => `${signature}:${instruction}:${inner}:${leafOffset}`;

export async function reconcile(
  rpc: SolanaRpc,
  pool: Pool,
  schema: string,
  programId: PublicKey,
): Promise<{ events: number; executions: number; differences: Difference[] }> {
  const decode = transactionDecoder(programId);
  const upTo = Number((await pool.query(`SELECT latest_slot FROM ${schema}.checkpoint`)).rows[0].latest_slot);
  const signatures: string[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await rpc.getSignaturesForAddress(programId.toBase58(), { before, limit: 1000 });
    for (const info of page) if ((info.err === null || info.err === undefined) && info.slot <= upTo) signatures.push(info.signature);
    if (page.length < 1000) break;
    before = page[page.length - 1]!.signature;
  }
  const chain = new Map<string, StoredEvent>();
  for (let from = 0; from < signatures.length; from += 500) {
    const raws = await rpc.getTransactions(signatures.slice(from, from + 500));
    for (const raw of raws) {
      if (!raw) continue;
      for (const event of decode(raw).events) chain.set(keyOf(event.signature, event.instructionIndex, event.innerIndex, event.leafOffset), event);
    }
  }
  const stored = (await pool.query(`SELECT signature, instruction_index, inner_index, leaf_offset, slot, block_time, commitment, name, execution_id, agent, fee_shard, data FROM ${schema}.events WHERE slot <= $1`, [upTo])).rows;
  const differences: Difference[] = [];
  const seen = new Set<string>();
  for (const row of stored) {
    const key = keyOf(row.signature, row.instruction_index, row.inner_index, row.leaf_offset);
    seen.add(key);
    const event = chain.get(key);
    if (!event) differences.push({ kind: "extra_event", key, detail: `${row.name} is stored but not on the chain` });
    // jsonb keeps keys in its own order: compare canonical forms.
    else if (canonicalJson(event.data) !== canonicalJson(row.data) || event.name !== row.name) differences.push({ kind: "event_data", key, detail: `${row.name} differs from the chain's ${event.name}` });
  }
  for (const [key, event] of chain) if (!seen.has(key)) differences.push({ kind: "missing_event", key, detail: `${event.name} is on the chain but not stored` });

  // Executions: the stored rows against rows rebuilt from the chain's events.
  const byExecution = new Map<string, EventRecord[]>();
  for (const event of [...chain.values()].sort((a, b) => a.slot - b.slot)) {
    if (!event.executionId) continue;
    const list = byExecution.get(event.executionId) ?? [];
    list.push({ signature: event.signature, slot: event.slot, block_time: event.blockTime, commitment: "finalized", name: event.name, execution_id: event.executionId, agent: event.agent, fee_shard: event.feeShard, data: event.data });
    byExecution.set(event.executionId, list);
  }
  const rows = new Map((await pool.query(`SELECT id, state, refund_reason, amount_usdc, price_per_unit_usdc, max_units, units, charged_usdc, returned_usdc, creator_share_usdc, fee_usdc, payer, agent, api_key_id FROM ${schema}.executions WHERE max_slot <= $1`, [upTo])).rows.map((row) => [String(row.id), row]));
  for (const [id, events] of byExecution) {
    const expected = executionFromEvents(id, events, () => null)!;
    const row = rows.get(id);
    const fields = [
      "state",
      "refund_reason",
      "amount_usdc",
      "price_per_unit_usdc",
      "max_units",
      "units",
      "charged_usdc",
      "returned_usdc",
      "creator_share_usdc",
      "fee_usdc",
      "payer",
      "agent",
      "api_key_id",
    ] as const;
    if (!row) {
      differences.push({ kind: "execution", key: id, detail: "on the chain but not stored" });
      continue;
    }
    for (const field of fields) {
      if (String(row[field] ?? null) !== String(expected[field] ?? null)) differences.push({ kind: "execution", key: id, detail: `${field}: stored ${row[field]}, chain ${expected[field]}` });
    }
    rows.delete(id);
  }
  for (const id of rows.keys()) differences.push({ kind: "execution", key: id, detail: "stored but not on the chain" });

  // Leaves, by (agent, leaf index): the stored ones against those the chain's events append.
  const leaves = new Map(
    (await pool.query(`SELECT l.agent, l.leaf_index, l.execution_id, l.leaf_hash, l.log_root FROM ${schema}.receipt_leaves l
                        JOIN ${schema}.transactions t ON t.signature = l.signature WHERE t.slot <= $1`, [upTo])).rows.map((row) => [
      `${row.agent}:${row.leaf_index}`,
      row,
    ]),
  );
  for (const event of chain.values()) {
    if (event.name !== "EscrowSettledToLog") continue;
    const expected = leafRowOf(event.signature, event.data);
    const key = `${expected.agent}:${expected.leaf_index}`;
    const row = leaves.get(key);
    if (!row) differences.push({ kind: "leaf", key, detail: "on the chain but not stored" });
    else if (row.leaf_hash !== expected.leaf_hash || row.execution_id !== expected.execution_id || row.log_root !== expected.log_root) {
      differences.push({ kind: "leaf", key, detail: `stored leaf ${row.leaf_hash} of ${row.execution_id}, chain ${expected.leaf_hash} of ${expected.execution_id}` });
    }
    leaves.delete(key);
  }
  for (const key of leaves.keys()) differences.push({ kind: "leaf", key, detail: "stored but not on the chain" });
  return { events: chain.size, executions: byExecution.size, differences };
}
