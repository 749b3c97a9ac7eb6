// The program's custom errors (codes 6000 and up), from the IDL.
import { IDL, type AgentMarket } from "./program.js";

/** Every error name of the program, as a union: "NotMarketAuthority" | "NotRelayer" | … */
export type AgentMarketErrorName = AgentMarket["errors"][number]["name"];

export interface AgentMarketErrorInfo {
  code: number;
  name: AgentMarketErrorName;
  msg: string;
}

/** The program's errors, in code order. */
export const AGENT_MARKET_ERRORS: readonly AgentMarketErrorInfo[] = IDL.errors.map((e) => ({
  code: e.code,
  name: e.name,
  msg: e.msg,
}));

/** The error names, in code order. */
export const AGENT_MARKET_ERROR_NAMES: readonly AgentMarketErrorName[] = AGENT_MARKET_ERRORS.map((e) => e.name);

const byCode = new Map(AGENT_MARKET_ERRORS.map((e) => [e.code, e]));
const byName = new Map(AGENT_MARKET_ERRORS.map((e) => [e.name, e]));

/** The program error with custom error code `code`; null for a code the program does not define. */
export function errorFromCode(code: number): AgentMarketErrorInfo | null {
  return byCode.get(code) ?? null;
}

/** The custom error code of `name`. */
export function errorCode(name: AgentMarketErrorName): number {
  const found = byName.get(name);
  if (!found) throw new Error(`unknown error ${name}`);
  return found.code;
}

/**
 * The program error in a transaction error of the form
 * `{ InstructionError: [index, { Custom: code }] }` (what RPC `meta.err` and
 * SendTransactionError carry); null if it is not one of the program's custom errors.
 */
export function errorFromTransactionError(
  err: unknown,
): (AgentMarketErrorInfo & { instructionIndex: number }) | null {
  if (err === null || typeof err !== "object" || !("InstructionError" in err)) return null;
  const detail = (err as { InstructionError: unknown }).InstructionError;
  if (!Array.isArray(detail) || detail.length !== 2) return null;
  const [instructionIndex, inner] = detail as [unknown, unknown];
  if (typeof instructionIndex !== "number" || inner === null || typeof inner !== "object" || !("Custom" in inner)) {
    return null;
  }
  const code = (inner as { Custom: unknown }).Custom;
  const info = typeof code === "number" ? errorFromCode(code) : null;
  return info ? { ...info, instructionIndex } : null;
}
