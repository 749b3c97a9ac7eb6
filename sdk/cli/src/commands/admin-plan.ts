// What an admin action signs, shown before it is signed: each instruction with its accounts named
// as the IDL names them, and every value it changes, before → after. Then, in this order: the
// mainnet guard, a simulation for --dry-run or the transaction, and the result (the signature, or
// one JSON object with --json).
import { errorFromCode, IDL, withComputeBudget } from "@agent-market/program";
import { SendTransactionError, Transaction, type Connection, type Keypair, type TransactionInstruction } from "@solana/web3.js";

import { CliError } from "../io.js";
import { table } from "../table.js";
import type { AdminContext } from "./admin-context.js";

export type Value = string | number | boolean | null;

/** One value the transaction changes; null for one that does not exist before (or after). */
export interface Change {
  field: string;
  before: Value;
  after: Value;
}

export interface AdminPlan {
  /** The admin action, e.g. "update". */
  action: string;
  instructions: TransactionInstruction[];
  changes: Change[];
}

interface InstructionView {
  name: string;
  accounts: { name: string; address: string; signer: boolean; writable: boolean }[];
}

/** The instruction named by its discriminator, with the IDL's account names. */
function describe(ix: TransactionInstruction): InstructionView {
  const def = IDL.instructions.find((d) => d.discriminator.every((byte, i) => ix.data[i] === byte));
  return {
    name: def?.name ?? "unknown",
    accounts: ix.keys.map((meta, i) => ({
      name: def?.accounts[i]?.name ?? `account ${i}`,
      address: meta.pubkey.toBase58(),
      signer: meta.isSigner,
      writable: meta.isWritable,
    })),
  };
}

const shown = (value: Value): string => (value === null ? "(none)" : String(value));

const indented = (lines: string[]) => lines.slice(1).map((line) => `  ${line}`);

function summary(ctx: AdminContext, plan: AdminPlan, views: InstructionView[]): string[] {
  const names = views.map((v) => v.name).join(", ");
  const lines = [
    `${names} on ${ctx.network}, program ${ctx.programId.toBase58()}, through ${ctx.rpcUrl}`,
    `signer: ${ctx.signer.publicKey.toBase58()} (${ctx.keypairPath})`,
  ];
  views.forEach((view, i) => {
    lines.push(`instruction ${i + 1}: ${view.name}`);
    const flags = (a: InstructionView["accounts"][number]) => [a.signer ? "signer" : "", a.writable ? "writable" : ""].filter(Boolean);
    lines.push(...indented(table(["", "", ""], view.accounts.map((a) => [a.name, a.address, flags(a).join(", ")]))));
  });
  lines.push("changes:");
  lines.push(...indented(table(["", "", "", ""], plan.changes.map((c) => [c.field, shown(c.before), "→", shown(c.after)]))));
  return lines;
}

/** The program's error by name, else a log line that says what failed, else the raw error. */
function reason(err: unknown, logs: readonly string[]): string {
  const text = typeof err === "string" ? err : JSON.stringify(err);
  const custom = /"Custom":(\d+)/.exec(text) ?? /custom program error: (0x[0-9a-f]+)/i.exec(text);
  const program = custom ? errorFromCode(Number(custom[1])) : null;
  if (program) return `${program.name}: ${program.msg}`;
  const told = logs.find((line) => /already in use|does not exist|insufficient/i.test(line));
  if (told) return told.replace(/^Program log: /, "");
  return text;
}

function sendFailure(error: unknown): string {
  if (error instanceof SendTransactionError) return reason(error.message, error.logs ?? []);
  return error instanceof Error ? error.message : String(error);
}

const POLL_MS = 400;

/**
 * Signs and sends `transaction` (with the preflight simulation), then polls its status until it
 * is confirmed, fails, or its blockhash expires. Polling needs nothing but the JSON-RPC URL, where
 * web3.js's confirmation would guess a PubSub address from it.
 */
async function sendAndConfirm(connection: Connection, transaction: Transaction, signer: Keypair): Promise<string> {
  const latest = await connection.getLatestBlockhash("confirmed");
  transaction.feePayer = signer.publicKey;
  transaction.recentBlockhash = latest.blockhash;
  transaction.sign(signer);
  const signature = await connection.sendRawTransaction(transaction.serialize(), { preflightCommitment: "confirmed" });
  for (;;) {
    const [status] = (await connection.getSignatureStatuses([signature])).value;
    if (status?.err) throw new Error(`${reason(status.err, [])} (transaction ${signature})`);
    if (status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized") return signature;
    if ((await connection.getBlockHeight("confirmed")) > latest.lastValidBlockHeight) {
      throw new Error(`transaction ${signature} expired unconfirmed (its blockhash is too old); run the command again`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The --json answer of an action: what it signed (or would have, or nothing) and the signature. */
function printJson(ctx: AdminContext, action: string, views: InstructionView[], changes: Change[], signature: string | null): void {
  const result = {
    action,
    network: ctx.network,
    program_id: ctx.programId.toBase58(),
    signer: ctx.signer.publicKey.toBase58(),
    instructions: views,
    changes,
    dry_run: ctx.dryRun,
    signature,
  };
  ctx.io.out(JSON.stringify(result, null, 2));
}

/** Shows the plan, then signs and sends it (or simulates it for --dry-run) and prints the result. */
export async function carryOut(ctx: AdminContext, plan: AdminPlan): Promise<void> {
  const views = plan.instructions.map(describe);
  for (const line of summary(ctx, plan, views)) ctx.io.err(line);
  if (ctx.network === "mainnet" && !ctx.confirmMainnet && !ctx.dryRun) {
    throw new CliError(
      "refusing to sign for mainnet without --confirm-mainnet",
      "read the summary above, then run the same command with --confirm-mainnet",
    );
  }
  const transaction = new Transaction().add(...withComputeBudget(plan.instructions, ctx.programId));
  let signature: string | null = null;
  if (ctx.dryRun) {
    const simulated = await ctx.connection.simulateTransaction(transaction, [ctx.signer]);
    if (simulated.value.err !== null) {
      throw new CliError(`the program would refuse it: ${reason(simulated.value.err, simulated.value.logs ?? [])}`, "nothing was sent");
    }
    ctx.io.err("Dry run: the simulation succeeded; nothing was sent.");
  } else {
    try {
      signature = await sendAndConfirm(ctx.connection, transaction, ctx.signer);
    } catch (error) {
      throw new CliError(
        `${views.map((v) => v.name).join(", ")} failed: ${sendFailure(error)}`,
        "nothing was changed; fix the cause and run the command again",
      );
    }
    ctx.io.err(`Confirmed: transaction ${signature}`);
  }
  if (ctx.json) printJson(ctx, plan.action, views, plan.changes, signature);
  else if (signature) ctx.io.out(signature);
}

/** An action with nothing to sign (every shard created, nothing to sweep): said, not an error. */
export function nothingToDo(ctx: AdminContext, action: string, why: string): void {
  ctx.io.err(why);
  if (ctx.json) printJson(ctx, action, [], [], null);
}
