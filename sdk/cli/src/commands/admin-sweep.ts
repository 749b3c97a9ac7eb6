// `agent-market admin sweep`: moves the fee shards' balances to the market's treasury, the only
// place sweep_fees can send them, in one transaction. Anyone may sign it.
import { formatUsdc } from "@agent-market/client";
import { FEE_SHARD_COUNT, feeShardPda, sweepFeesInstruction } from "@agent-market/program";
import { unpackAccount } from "@solana/spl-token";

import { CliError, type Io } from "../io.js";
import { integerOption, parse } from "../options.js";
import { ADMIN_OPTIONS, adminContext, existingMarket } from "./admin-context.js";
import { carryOut, nothingToDo } from "./admin-plan.js";

export const SWEEP_USAGE = `agent-market admin sweep --keypair <payer file> --rpc <url> [--shard <0-${FEE_SHARD_COUNT - 1}>]

Sweeps every fee shard holding fees (or only --shard) into the market's treasury. Any keypair may
pay for it: the destination is fixed by the program.`;

export async function adminSweep(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, { ...ADMIN_OPTIONS, shard: { type: "string" } }, SWEEP_USAGE);
  const only = values.shard === undefined ? undefined : integerOption(values.shard, "--shard", SWEEP_USAGE, 0, FEE_SHARD_COUNT - 1);
  const ctx = await adminContext(io, values, SWEEP_USAGE);
  const market = await existingMarket(ctx);
  const indexes = (only === undefined ? Array.from({ length: FEE_SHARD_COUNT }, (_, index) => index) : [only]).filter(
    (index) => market.feeShardBumps[index] !== 0,
  );
  if (only !== undefined && indexes.length === 0) {
    throw new CliError(`fee shard ${only} does not exist`, "create it with agent-market admin shards");
  }
  const infos = await ctx.connection.getMultipleAccountsInfo([market.treasury, ...indexes.map((index) => feeShardPda(index, ctx.programId))]);
  const [treasuryInfo, ...shardInfos] = infos;
  if (!treasuryInfo) throw new CliError(`the treasury ${market.treasury.toBase58()} does not exist`, "set an existing one with agent-market admin update --treasury");
  const treasuryUsdc = unpackAccount(market.treasury, treasuryInfo, treasuryInfo.owner).amount;
  const full = indexes
    .map((index, i) => {
      const info = shardInfos[i];
      return { index, usdc: info ? unpackAccount(feeShardPda(index, ctx.programId), info, info.owner).amount : 0n };
    })
    .filter((shard) => shard.usdc > 0n);
  if (full.length === 0) {
    nothingToDo(ctx, "sweep", `No fees to sweep: ${only === undefined ? "every fee shard is" : `fee shard ${only} is`} empty.`);
    return;
  }
  const total = full.reduce((sum, shard) => sum + shard.usdc, 0n);
  await carryOut(ctx, {
    action: "sweep",
    instructions: full.map((shard) =>
      sweepFeesInstruction({ programId: ctx.programId, treasury: market.treasury, usdcMint: market.usdcMint, index: shard.index }),
    ),
    changes: [
      ...full.map((shard) => ({ field: `fee_shard_${shard.index}_usdc`, before: formatUsdc(shard.usdc), after: formatUsdc(0n) })),
      { field: "treasury_usdc", before: formatUsdc(treasuryUsdc), after: formatUsdc(treasuryUsdc + total) },
    ],
  });
}
