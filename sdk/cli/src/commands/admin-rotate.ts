// `agent-market admin rotate`: replaces the market's relayer or arbiter key with update_market.
// From the moment it lands the program refuses the old relayer key's open_escrow, settle, refund
// and subscribe, hence the procedure in docs/deploy.md: pause, drain, rotate, restart.
import { UsageError, type Io } from "../io.js";
import { parse } from "../options.js";
import { ADMIN_OPTIONS, adminContext, existingMarket, requireAuthority } from "./admin-context.js";
import { carryOut } from "./admin-plan.js";
import { addressOption, settingsOf, updatePlan } from "./admin-params.js";

export const ROTATE_USAGE = `agent-market admin rotate --keypair <authority file> --rpc <url>
                          [--relayer <new address>] [--arbiter <new address>]

Makes the given address the market's relayer (signs and pays for executions) or arbiter (resolves
disputes). Pause escrows first and let executions under way finish before rotating the relayer.`;

export async function adminRotate(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, { ...ADMIN_OPTIONS, relayer: { type: "string" }, arbiter: { type: "string" } }, ROTATE_USAGE);
  if (values.relayer === undefined && values.arbiter === undefined) {
    throw new UsageError("give --relayer <address> and/or --arbiter <address>", ROTATE_USAGE);
  }
  const relayer = values.relayer === undefined ? undefined : addressOption(values.relayer, "--relayer", ROTATE_USAGE);
  const arbiter = values.arbiter === undefined ? undefined : addressOption(values.arbiter, "--arbiter", ROTATE_USAGE);
  const ctx = await adminContext(io, values, ROTATE_USAGE);
  const market = await existingMarket(ctx);
  requireAuthority(ctx, market);
  const before = settingsOf(market);
  const params = { ...before.params, relayer: relayer ?? before.params.relayer, arbiter: arbiter ?? before.params.arbiter };
  await carryOut(ctx, updatePlan(ctx, "rotate", market, { ...before, params }));
}
