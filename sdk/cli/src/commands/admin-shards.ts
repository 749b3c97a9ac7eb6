// `agent-market admin shards`: creates the fee shards the market does not have yet, in one
// transaction. Settlements pay their fee into any of the FEE_SHARD_COUNT shards, so all are needed.
import { createFeeShardInstruction, FEE_SHARD_COUNT, feeShardPda } from "@agent-market/program";

import type { Io } from "../io.js";
import { parse } from "../options.js";
import { ADMIN_OPTIONS, adminContext, existingMarket, requireAuthority } from "./admin-context.js";
import { carryOut, nothingToDo } from "./admin-plan.js";

export const SHARDS_USAGE = `agent-market admin shards --keypair <authority file> --rpc <url>

Creates every fee shard (0 to ${FEE_SHARD_COUNT - 1}) the market lacks: USDC token accounts owned by the
market, the authority paying their rent. With all of them created it signs nothing.`;

export async function adminShards(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, ADMIN_OPTIONS, SHARDS_USAGE);
  const ctx = await adminContext(io, values, SHARDS_USAGE);
  const market = await existingMarket(ctx);
  requireAuthority(ctx, market);
  // The market records each created shard's bump, 0 for one not created yet.
  const missing = Array.from({ length: FEE_SHARD_COUNT }, (_, index) => index).filter((index) => market.feeShardBumps[index] === 0);
  if (missing.length === 0) {
    nothingToDo(ctx, "shards", `All ${FEE_SHARD_COUNT} fee shards exist; nothing to sign.`);
    return;
  }
  await carryOut(ctx, {
    action: "shards",
    instructions: missing.map((index) =>
      createFeeShardInstruction({ programId: ctx.programId, authority: ctx.signer.publicKey, usdcMint: market.usdcMint, index }),
    ),
    changes: missing.map((index) => ({ field: `fee_shard_${index}`, before: null, after: feeShardPda(index, ctx.programId).toBase58() })),
  });
}
