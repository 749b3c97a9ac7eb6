// `agent-market admin show`: the market as it is on chain, what the other actions start from.
import { FEE_SHARD_COUNT, marketPda } from "@agent-market/program";

import type { Io } from "../io.js";
import { parse } from "../options.js";
import { table } from "../table.js";
import { ADMIN_OPTIONS, adminContext, existingMarket } from "./admin-context.js";
import { settingsOf, settingsView } from "./admin-params.js";

export const SHOW_USAGE = `agent-market admin show --keypair <any keypair file> --rpc <url> [--json]

Prints the market's account: its authority, treasury, relayer, arbiter, amounts, windows, whether
escrows are paused, and which fee shards exist. Signs nothing.`;

export async function adminShow(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, ADMIN_OPTIONS, SHOW_USAGE);
  const ctx = await adminContext(io, values, SHOW_USAGE);
  const market = await existingMarket(ctx);
  const fields = settingsView(settingsOf(market));
  const shards = Array.from({ length: FEE_SHARD_COUNT }, (_, index) => index).filter((index) => market.feeShardBumps[index] !== 0);
  if (ctx.json) {
    io.out(
      JSON.stringify(
        {
          network: ctx.network,
          program_id: ctx.programId.toBase58(),
          market: marketPda(ctx.programId).toBase58(),
          usdc_mint: market.usdcMint.toBase58(),
          ...Object.fromEntries(fields),
          fee_shards: shards,
        },
        null,
        2,
      ),
    );
    return;
  }
  const rows = [
    ["network", ctx.network],
    ["program_id", ctx.programId.toBase58()],
    ["market", marketPda(ctx.programId).toBase58()],
    ["usdc_mint", market.usdcMint.toBase58()],
    ...fields.map(([field, value]) => [field, String(value)]),
    ["fee_shards", shards.length === 0 ? "none" : shards.join(", ")],
  ];
  for (const line of table(["", ""], rows).slice(1)) io.out(line);
}
