// What the web-run routes share: the network check.
import type { NetworkName } from "@agent-market/program";

import type { Services } from "../app-services.js";
import { ApiError } from "../errors.js";

/** A network this relayer serves, or 400 `network_not_configured`. */
export function servedNetwork(services: Services, name: NetworkName): NetworkName {
  if (!services.config.networks[name]) {
    throw new ApiError("network_not_configured", `This relayer does not serve ${name}.`, undefined, { network: name });
  }
  return name;
}

