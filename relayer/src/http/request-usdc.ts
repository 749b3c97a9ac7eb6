// A request's USDC amount in base units. The route's JSON Schema (USDC_WIRE_PATTERN) has already
// refused any other form, so what is left to refuse is an amount above u64, with the route's words.
import { parseWireUsdc } from "@agent-market/program";

import { ApiError } from "../errors.js";

export function requestUsdc(text: string, param: string, message: string): bigint {
  try {
    return parseWireUsdc(text);
  } catch {
    throw new ApiError("validation_failed", message, param);
  }
}
