// `agent-market admin pause` and `unpause`: escrows_paused with update_market. Paused, the program
// opens no escrow and sells no subscription; open escrows still settle, refund or are reclaimed.
import type { Io } from "../io.js";
import { parse } from "../options.js";
import { ADMIN_OPTIONS, adminContext, existingMarket, requireAuthority } from "./admin-context.js";
import { carryOut } from "./admin-plan.js";
import { settingsOf, updatePlan } from "./admin-params.js";

export const PAUSE_USAGE = `agent-market admin pause|unpause --keypair <authority file> --rpc <url>

pause stops new escrows and subscriptions (executions under way finish); unpause lets them open again.`;

export async function adminPause(args: string[], io: Io, paused: boolean): Promise<void> {
  const { values } = parse(args, ADMIN_OPTIONS, PAUSE_USAGE);
  const ctx = await adminContext(io, values, PAUSE_USAGE);
  const market = await existingMarket(ctx);
  requireAuthority(ctx, market);
  const before = settingsOf(market);
  await carryOut(ctx, updatePlan(ctx, paused ? "pause" : "unpause", market, { ...before, params: { ...before.params, escrowsPaused: paused } }));
}
