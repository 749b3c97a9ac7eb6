import { formatUsdc, type ApiKey } from "@agent-market/client";
import type { NetworkName } from "@agent-market/program/network";

import { emptyAllowance } from "../data/allowance-field.js";
import type { Loaded } from "../data/use-load.js";
import { usdcText } from "./money.js";

const quoted = (names: readonly string[]): string => {
  const all = names.map((name) => `“${name}”`);
  return all.length === 1 ? all[0]! : `${all.slice(0, -1).join(", ")} and ${all.at(-1)!}`;
};

/** What the allowance field needs from this wallet: an amount, or nothing, whose sum it shows. */
function hint(keys: readonly ApiKey[], network: NetworkName): string {
  const empty = emptyAllowance(keys, network);
  if (empty.keys === 0) return "Enter an amount: runs from the Marketplace draw on it, and so will the API keys you generate.";
  if (empty.uncapped.length > 0) {
    return `Enter an amount: left empty, the allowance would be the sum of your API keys' spending caps, but ${quoted(empty.uncapped)} ${empty.uncapped.length === 1 ? "has" : "have"} no cap.`;
  }
  const sum = usdcText(formatUsdc(empty.sumUsdc));
  return empty.keys === 1 ? `Left empty, the allowance is your API key's spending cap: ${sum}.` : `Left empty, the allowance is the sum of your ${empty.keys} API keys' spending caps: ${sum}.`;
}

/**
 * The allowance field's hint, worded for the wallet's keys. Until they are read (or if they
 * cannot be), it asks for an amount and says no more: the relayer judges an empty field anyway.
 */
export function AllowanceHint({ keys, network }: { keys: Loaded<ApiKey[]>; network: NetworkName }) {
  return (
    <p id="allowance-hint" className="muted small" data-testid="allowance-hint">
      {keys.state === "ready" ? hint(keys.value, network) : "Enter the most the marketplace may draw on, in USDC."}
    </p>
  );
}
