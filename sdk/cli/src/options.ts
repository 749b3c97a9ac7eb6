// Argument parsing on node:util parseArgs: strict (an unknown option is a usage error) and
// typed values checked here, so commands only see what they can use.
import type { NetworkName } from "@agent-market/program/network";
import { parseArgs, type ParseArgsConfig } from "node:util";

import { parseUsdc } from "@agent-market/client";
import { parseDecimalU64 } from "@agent-market/program";

import { UsageError } from "./io.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Parses `args`; at most `positionals` positional arguments. */
export function parse<O extends Options>(args: string[], options: O, usage: string, positionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`unexpected argument ${parsed.positionals[positionals]}`, usage);
  }
  return parsed;
}

export function required<T>(value: T | undefined, name: string, usage: string): T {
  if (value === undefined) throw new UsageError(`${name} is required`, usage);
  return value;
}

/** Base units of a USDC amount typed by a person ("0.25", "100"). */
export function usdcOption(text: string, name: string, usage: string): bigint {
  try {
    return parseUsdc(text);
  } catch (error) {
    throw new UsageError(`${name}: ${(error as Error).message}`, usage);
  }
}

export function integerOption(text: string, name: string, usage: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new UsageError(`${name} must be an integer from ${min} to ${max}`, usage);
  return value;
}

/** A u64 count typed in decimal, at least 1. */
export function positiveU64Option(text: string, name: string, usage: string): bigint {
  const value = parseDecimalU64(text);
  if (value === null || value === 0n) throw new UsageError(`${name} must be a whole number from 1 to 18446744073709551615`, usage);
  return value;
}

export function jsonObjectOption(text: string, name: string, usage: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${name} is not JSON: ${text}`, usage);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError(`${name} must be a JSON object`, usage);
  return value as Record<string, unknown>;
}

export function networkOption(text: string | undefined, usage: string): NetworkName {
  const network = text ?? "devnet";
  if (network !== "devnet" && network !== "mainnet") throw new UsageError("--network is devnet or mainnet", usage);
  return network;
}
