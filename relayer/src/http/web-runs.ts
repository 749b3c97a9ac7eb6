// What the web-run routes share: the network check, and a change read from a body.
import { formatUsdc, type NetworkName } from "@agent-market/program";

import type { Services } from "../app-services.js";
import { WEB_RUN_MAX_CAP_USDC, type WebRunChange } from "../auth/web-run-keys.js";
import { ApiError } from "../errors.js";
import { requestUsdc } from "./request-usdc.js";
import { network, usdcAmount } from "./schemas.js";

/** A change of web runs in a body: the network, and a cap, a switch or both. */
export const webRunChangeProperties = { network, spending_cap_usdc: usdcAmount, enabled: { type: "boolean" } } as const;
export const ONE_CHANGE_AT_LEAST = [{ required: ["spending_cap_usdc"] }, { required: ["enabled"] }] as const;

/** A network this relayer serves, or 400 `network_not_configured`. */
export function servedNetwork(services: Services, name: NetworkName): NetworkName {
  if (!services.config.networks[name]) {
    throw new ApiError("network_not_configured", `This relayer does not serve ${name}.`, undefined, { network: name });
  }
  return name;
}


/** The change a body asks for; a cap above WEB_RUN_MAX_CAP_USDC is 400 `validation_failed`. */
export function webRunChange(body: { spending_cap_usdc?: string; enabled?: boolean }): WebRunChange {
  let cap: bigint | undefined;
  if (body.spending_cap_usdc !== undefined) {
    const tooLarge = `spending_cap_usdc must be at most ${formatUsdc(WEB_RUN_MAX_CAP_USDC)}.`;
    cap = requestUsdc(body.spending_cap_usdc, "spending_cap_usdc", tooLarge);
    if (cap > WEB_RUN_MAX_CAP_USDC) throw new ApiError("validation_failed", tooLarge, "spending_cap_usdc");
  }
  return { ...(cap === undefined ? {} : { spending_cap_usdc: cap }), ...(body.enabled === undefined ? {} : { enabled: body.enabled }) };
}
