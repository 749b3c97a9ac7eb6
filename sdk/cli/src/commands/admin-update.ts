// `agent-market admin update`: changes the market's amounts, windows, treasury or authority with
// update_market, leaving every other field as it is on chain.
import { PublicKey } from "@solana/web3.js";

import { UsageError, type Io } from "../io.js";
import { parse } from "../options.js";
import { ADMIN_OPTIONS, adminContext, existingMarket, requireAuthority } from "./admin-context.js";
import { carryOut } from "./admin-plan.js";
import { addressOption, PARAM_OPTIONS, settingsOf, updatePlan, withParamOptions } from "./admin-params.js";

export const UPDATE_USAGE = `agent-market admin update --keypair <authority file> --rpc <url>
                          [--min-collateral <usdc>] [--min-price <usdc>] [--escrow-grace-secs <n>]
                          [--dispute-window-secs <n>] [--collateral-cooldown-secs <n>]
                          [--treasury <token account>] [--new-authority <address>]

Changes the parameters given, and only those. The program applies the rules of initialisation
again (InvalidMarketParams). --new-authority proposes another key as authority: the market is
still this one's until that key accepts with agent-market admin accept (a mistyped address can
never lock the market). Proposing the current authority withdraws a proposal.`;

export async function adminUpdate(args: string[], io: Io): Promise<void> {
  const { values } = parse(
    args,
    { ...ADMIN_OPTIONS, ...PARAM_OPTIONS, treasury: { type: "string" }, "new-authority": { type: "string" } },
    UPDATE_USAGE,
  );
  const given = [...Object.keys(PARAM_OPTIONS), "treasury", "new-authority"].filter((name) => values[name as keyof typeof values] !== undefined);
  if (given.length === 0) throw new UsageError("give at least one value to change", UPDATE_USAGE);
  const treasury = values.treasury === undefined ? undefined : addressOption(values.treasury, "--treasury", UPDATE_USAGE);
  const newAuthority =
    values["new-authority"] === undefined ? undefined : addressOption(values["new-authority"], "--new-authority", UPDATE_USAGE);
  const ctx = await adminContext(io, values, UPDATE_USAGE);
  const market = await existingMarket(ctx);
  requireAuthority(ctx, market);
  const before = settingsOf(market);
  await carryOut(
    ctx,
    updatePlan(ctx, "update", market, {
      params: withParamOptions(before.params, values, UPDATE_USAGE),
      treasury: treasury ?? before.treasury,
      authority: before.authority,
      pendingAuthority:
        newAuthority === undefined ? before.pendingAuthority : newAuthority.equals(before.authority) ? PublicKey.default : newAuthority,
    }),
  );
}
