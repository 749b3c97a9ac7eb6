import { formatUsdc } from "@agent-market/client";
import { escrowPda, escrowRef, fetchEscrow, parseExecutionId, reclaimInstruction } from "@agent-market/program";
import { getAccount } from "@solana/spl-token";

import { chainNow, connect, duration, market, signAndSend } from "../chain.js";
import { readConfig } from "../config.js";
import { CliError, output, UsageError, type Command } from "../io.js";
import { keypairOption } from "../keyfile.js";
import { parse, required } from "../options.js";
import { programIdOption } from "../program-id.js";

const usage = `agent-market reclaim <execution id> [--keypair <wallet file>] [--rpc <url>]
                     [--program-id <address>] [--json]

Takes back the USDC of an escrow nobody settled or refunded by its deadline (the agent's maximum
execution time plus the market's grace), straight from the program: signed by the payer's wallet
(the one given to login unless --keypair) and sent to the RPC (--rpc, $AGENT_MARKET_RPC_URL or
the one login remembered), without the relayer. An included call of a subscription is given back.
--program-id: the program's address on that network (else $AGENT_MARKET_PROGRAM_ID, else the IDL's).`;

export const reclaim: Command = {
  name: "reclaim",
  summary: "take back an escrow left unsettled past its deadline",
  usage,
  async run(args, io) {
    const { values, positionals } = parse(
      args,
      { keypair: { type: "string" }, rpc: { type: "string" }, "program-id": { type: "string" } },
      usage,
      1,
    );
    const id = required(positionals[0], "<execution id>", usage);
    const bytes = parseExecutionId(id);
    if (!bytes) throw new UsageError(`${id} is not an execution id (exec_…)`, usage);
    const programId = programIdOption(io, values["program-id"], usage);
    const config = await readConfig(io);
    const payer = await keypairOption(values.keypair, config.keypair);
    const connection = connect(io, values.rpc, config);
    const address = escrowPda(bytes, programId);
    const escrow = await fetchEscrow(connection, address, { programId });
    if (!escrow) throw new CliError(`no open escrow for ${id} at ${address.toBase58()}: it was settled, refunded or reclaimed already`);
    if (!escrow.payer.equals(payer.publicKey)) {
      throw new CliError(`the escrow of ${id} was paid by ${escrow.payer.toBase58()}, not ${payer.publicKey.toBase58()}`, "pass the payer's --keypair");
    }
    const now = await chainNow(connection);
    if (now <= escrow.deadline) {
      throw new CliError(
        `the escrow of ${id} can be reclaimed in ${duration(escrow.deadline - now + 1n)} (after ${new Date(Number(escrow.deadline) * 1000).toISOString()})`,
        "the relayer may still settle or refund it before then",
      );
    }
    const { usdcMint } = await market(connection, programId);
    const before = (await getAccount(connection, escrow.payerTokenAccount)).amount;
    const signature = await signAndSend(
      io,
      connection,
      payer,
      programId,
      [reclaimInstruction({ programId, usdcMint, escrow: escrowRef(escrow), withSubscription: escrow.usedIncludedCall })],
      [
        `reclaim on ${id}: ${formatUsdc(escrow.amountUsdc)} USDC from the agent's escrow vault back to ${escrow.payerTokenAccount.toBase58()}`,
        ...(escrow.usedIncludedCall ? ["the included call it used goes back to the subscription"] : []),
      ],
    );
    const after = (await getAccount(connection, escrow.payerTokenAccount)).amount;
    output(io, { execution_id: id, reclaimed_usdc: formatUsdc(after - before), transaction: signature }, () => [
      `Reclaimed ${formatUsdc(after - before)} USDC of ${id}, transaction ${signature}`,
    ]);
  },
};
