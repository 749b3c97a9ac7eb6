// Reconciliation: the database against the chain, in both directions. Every execution's final
// state must match what its transactions did on chain, no escrow may be open on chain that the
// database does not know as unfinished, and every key's usage must add up to its executions.
import { decodeEscrow, escrowPda, IDL, type NetworkName } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import type { AccountInfo } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { TransactionSender } from "../chain/tx-sender.js";
import type { Db } from "../db/database.js";
import { executionIdBytes, type ExecutionRow } from "./execution-row.js";
import { settledInLog } from "./log-settlement.js";

export interface Difference {
  execution?: string;
  api_key?: string;
  escrow?: string;
  problem: string;
}

export interface ReconcileReport {
  network: NetworkName;
  executions: number;
  open_escrows_on_chain: number;
  differences: Difference[];
}

const ESCROW_DISCRIMINATOR = Uint8Array.from(IDL.accounts.find((a) => a.name === "Escrow")!.discriminator);

export async function reconcile(
  db: Db,
  chain: ChainService,
  senders: Partial<Record<NetworkName, TransactionSender>>,
  network: NetworkName,
): Promise<ReconcileReport> {
  const connection = chain.connection(network);
  const programId = chain.programId(network);
  const sender = senders[network]!;
  const differences: Difference[] = [];
  const { rows } = await db.query<ExecutionRow>("SELECT * FROM executions WHERE network = $1 ORDER BY created_at", [network]);

  const landedOk = async (signature: string | undefined): Promise<boolean> => {
    if (!signature) return false;
    const status = await sender.status(signature);
    return status !== null && status.err === null;
  };

  const escrowAddresses = rows.map((row) => escrowPda(executionIdBytes(row.id), programId));
  const escrowInfos: (AccountInfo<Buffer> | null)[] = [];
  for (let i = 0; i < escrowAddresses.length; i += 100) {
    escrowInfos.push(...(await connection.getMultipleAccountsInfo(escrowAddresses.slice(i, i + 100), "confirmed")));
  }

  await Promise.all(
    rows.map(async (row, i) => {
      const escrowOpen = escrowInfos[i] !== null;
      const [opened, settled, refunded] = await Promise.all([
        landedOk(row.escrow_tx?.signature),
        landedOk(row.settle_tx?.signature),
        landedOk(row.refund_tx?.signature),
      ]);
      const differ = (problem: string) => differences.push({ execution: row.id, problem });
      switch (row.state) {
        case "settled":
          if (!settled) differ("settled in the database, but its settle transaction did not land");
          if (refunded) differ("settled in the database, but a refund landed too");
          if (escrowOpen) differ("settled in the database, but its escrow is still open");
          break;
        case "refunded":
          if (settled) differ("refunded in the database, but its settle transaction landed");
          if (escrowOpen) differ("refunded in the database, but its escrow is still open");
          if (!refunded && opened && !escrowOpen) {
            // Closed by the payer's own reclaim after the deadline: the payer is whole.
            break;
          }
          if (!refunded && opened) differ("refunded in the database, but no refund landed");
          break;
        case "failed":
          if (opened) differ("failed (nothing charged) in the database, but its open_escrow landed");
          if (escrowOpen) differ("failed in the database, but an escrow is open");
          break;
        default:
          if (settled || refunded) differ(`${row.state} in the database, but its final transaction already landed`);
      }
      if (escrowOpen && row.amount_usdc !== null) {
        const escrow = decodeEscrow(escrowInfos[i]!.data);
        if (escrow.amountUsdc.toString() !== row.amount_usdc) {
          differ(`escrow holds ${escrow.amountUsdc} but the database recorded ${row.amount_usdc}`);
        }
        if (row.escrow_nonce !== null && escrow.nonce.toString() !== row.escrow_nonce) {
          differ(`escrow has nonce ${escrow.nonce} but the database recorded ${row.escrow_nonce}`);
        }
      }
    }),
  );

  // A settlement leaves no account: the transaction that closed the escrow says it instead, read
  // for the rows that recorded one and are not settled.
  const notSettled = rows.filter((row) => row.state !== "settled" && row.state !== "settling" && row.settle_tx !== null);
  for (const row of notSettled) {
    if (await settledInLog(connection, programId, { executionId: executionIdBytes(row.id), nonce: BigInt(row.escrow_nonce!) })) {
      differences.push({ execution: row.id, problem: `${row.state} in the database, but the receipt log shows a settle landed` });
    }
  }

  const known = new Set(escrowAddresses.map((address) => address.toBase58()));
  const unfinished = new Set(
    rows.filter((row) => !["settled", "refunded", "failed"].includes(row.state)).map((row) => escrowPda(executionIdBytes(row.id), programId).toBase58()),
  );
  const onChain = await connection.getProgramAccounts(programId, {
    commitment: "confirmed",
    filters: [
      { memcmp: { offset: 0, bytes: utils.bytes.bs58.encode(ESCROW_DISCRIMINATOR) } },
      // Escrow.rent_payer, after the discriminator, execution id, agent, nonce, payer, token
      // account, key id, amount, request hash, opened_at and deadline: escrows this relayer opened.
      { memcmp: { offset: 8 + 16 + 32 + 8 + 32 + 32 + 16 + 8 + 32 + 8 + 8, bytes: sender.signer.publicKey.toBase58() } },
    ],
  });
  for (const { pubkey } of onChain) {
    const address = pubkey.toBase58();
    if (!known.has(address)) differences.push({ escrow: address, problem: "an escrow this relayer opened is unknown to the database" });
    else if (!unfinished.has(address)) differences.push({ escrow: address, problem: "an escrow is open for a finished execution" });
  }

  // A key spends on executions and on subscription periods bought with it (a failed purchase
  // gave its reservation back).
  const usage = await db.query<{
    id: string;
    execution_count: string;
    spent_usdc: string;
    executions: string;
    settled_usdc: string | null;
    in_flight_usdc: string | null;
    subscriptions_usdc: string | null;
  }>(
    `SELECT k.id, k.execution_count, k.spent_usdc, coalesce(e.executions, 0) AS executions, e.settled_usdc, e.in_flight_usdc,
            s.subscriptions_usdc
     FROM api_keys k
     LEFT JOIN (
       SELECT api_key_id,
              count(*) FILTER (WHERE state <> 'failed') AS executions,
              sum(coalesce(charged_usdc, amount_usdc)) FILTER (WHERE state = 'settled') AS settled_usdc,
              sum(quoted_usdc) FILTER (WHERE state NOT IN ('settled', 'refunded', 'failed')) AS in_flight_usdc
       FROM executions WHERE network = $1 GROUP BY api_key_id
     ) e ON e.api_key_id = k.id
     LEFT JOIN (
       SELECT api_key_id, sum(price_usdc) FILTER (WHERE state <> 'failed') AS subscriptions_usdc
       FROM subscription_purchases WHERE network = $1 GROUP BY api_key_id
     ) s ON s.api_key_id = k.id
     WHERE e.api_key_id IS NOT NULL OR s.api_key_id IS NOT NULL`,
    [network],
  );
  for (const key of usage.rows) {
    if (key.execution_count !== key.executions) {
      differences.push({ api_key: key.id, problem: `execution_count ${key.execution_count}, but ${key.executions} executions` });
    }
    const expected =
      BigInt(key.settled_usdc ?? "0") + BigInt(key.in_flight_usdc ?? "0") + BigInt(key.subscriptions_usdc ?? "0");
    if (BigInt(key.spent_usdc) !== expected) {
      differences.push({ api_key: key.id, problem: `spent_usdc ${key.spent_usdc}, but its executions and subscriptions add up to ${expected}` });
    }
  }

  return { network, executions: rows.length, open_escrows_on_chain: onChain.length, differences };
}
