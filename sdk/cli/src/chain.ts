// What the commands that sign share: the RPC connection, the chain's clock, and sending a
// transaction after saying what it does, with the program's refusal spelled out by name.
import { errorFromCode, errorFromTransactionError, fetchMarket, marketPda, withComputeBudget, type Market } from "@agent-market/program";
import {
  Connection,
  SendTransactionError,
  SYSVAR_CLOCK_PUBKEY,
  Transaction,
  type Keypair,
  type PublicKey,
  type TransactionInstruction,
} from "@solana/web3.js";

import { rpcUrl, type CliConfig } from "./config.js";
import { CliError, type Io } from "./io.js";

export function connect(io: Io, option: string | undefined, config: CliConfig): Connection {
  return new Connection(rpcUrl(io, option, config), "confirmed");
}

/** The market of the program at `programId` (the one programIdOption gives). */
export async function market(connection: Connection, programId: PublicKey): Promise<Market> {
  const address = marketPda(programId);
  const found = await fetchMarket(connection, address, { programId });
  if (!found) {
    throw new CliError(
      `no agent_market market at ${address.toBase58()} (program ${programId.toBase58()}) on this RPC's network`,
      "check --rpc (or AGENT_MARKET_RPC_URL) and --program-id (or AGENT_MARKET_PROGRAM_ID)",
    );
  }
  return found;
}

/** `Clock::unix_timestamp` now: the time the program judges deadlines and windows by. */
export async function chainNow(connection: Connection): Promise<bigint> {
  const clock = await connection.getAccountInfo(SYSVAR_CLOCK_PUBKEY, "confirmed");
  if (!clock) throw new CliError("the RPC has no clock sysvar");
  // Clock: slot, epoch start timestamp, epoch, leader schedule epoch, then unix_timestamp.
  return clock.data.readBigInt64LE(32);
}

/**
 * Prints `what` (the signer and the instruction's effects) on stderr, signs with `signer` (also
 * the fee payer) and sends; resolves with the signature once confirmed. A refusal by the program
 * becomes a CliError naming its error, nothing having been charged by the failed preflight.
 */
export async function signAndSend(
  io: Io,
  connection: Connection,
  signer: Keypair,
  programId: PublicKey,
  instructions: TransactionInstruction[],
  what: string[],
): Promise<string> {
  io.err(`Signing as ${signer.publicKey.toBase58()}:`);
  for (const line of what) io.err(`  ${line}`);
  const latest = await connection.getLatestBlockhash("confirmed");
  // The units they need: the CLI sets no unit price, a person's transaction waiting no queue.
  const tx = new Transaction({ feePayer: signer.publicKey, ...latest }).add(...withComputeBudget(instructions, programId));
  tx.sign(signer);
  let signature: string;
  try {
    signature = await connection.sendRawTransaction(tx.serialize());
  } catch (error) {
    if (error instanceof SendTransactionError) {
      const custom = /custom program error: (0x[0-9a-f]+)/i.exec(error.message);
      const name = custom ? errorFromCode(Number(custom[1]))?.name : undefined;
      throw new CliError(`the program refused it${name ? `: ${name}` : ""} (${error.message.split("\n")[0]})`, "nothing was sent");
    }
    throw error;
  }
  const confirmation = await connection.confirmTransaction({ signature, ...latest }, "confirmed");
  if (confirmation.value.err) {
    const name = errorFromTransactionError(confirmation.value.err)?.name;
    throw new CliError(`the transaction failed on-chain${name ? `: ${name}` : ""} (${signature})`);
  }
  return signature;
}

/** A number of seconds as people read it: 6d 23h 59m 59s. */
export function duration(secs: bigint): string {
  const parts: string[] = [];
  let rest = secs < 0n ? 0n : secs;
  for (const [unit, size] of [["d", 86_400n], ["h", 3_600n], ["m", 60n]] as const) {
    if (rest >= size) {
      parts.push(`${rest / size}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0n || parts.length === 0) parts.push(`${rest}s`);
  return parts.join(" ");
}
