// What the web-run routes share: the settings' response schema, and the network check.
import type { NetworkName } from "@agent-market/program";

import type { Services } from "../app-services.js";
import { ApiError } from "../errors.js";
import { network, nullableTimestamp, usdcAmount } from "./schemas.js";

/** A wallet's web runs on one network: whether sessions may run agents, and their cap. */
export const webRunSettings = {
  type: "object",
  required: ["object", "network", "key_id", "enabled", "spending_cap_usdc", "spent_usdc", "execution_count", "revoked_at"],
  properties: {
    object: { const: "web_runs" },
    network,
    key_id: { type: "string" },
    enabled: { type: "boolean" },
    spending_cap_usdc: usdcAmount,
    spent_usdc: usdcAmount,
    execution_count: { type: "integer" },
    revoked_at: nullableTimestamp,
  },
} as const;

/** A network this relayer serves, or 400 `network_not_configured`. */
export function servedNetwork(services: Services, name: NetworkName): NetworkName {
  if (!services.config.networks[name]) {
    throw new ApiError("network_not_configured", `This relayer does not serve ${name}.`, undefined, { network: name });
  }
  return name;
}

