// The program's address the CLI works with. Devnet and mainnet deployments may run the program at
// different ids, so it is configuration: --program-id, else $AGENT_MARKET_PROGRAM_ID, else the
// IDL's address this release was built with.
import { PROGRAM_ID } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import { CliError, UsageError, type Io } from "./io.js";

function address(text: string): PublicKey | null {
  try {
    return new PublicKey(text);
  } catch {
    return null;
  }
}

export function programIdOption(io: Io, option: string | undefined, usage: string): PublicKey {
  if (option !== undefined) {
    const parsed = address(option);
    if (!parsed) throw new UsageError(`--program-id ${option} is not an address`, usage);
    return parsed;
  }
  const fromEnv = io.env.AGENT_MARKET_PROGRAM_ID;
  if (fromEnv) {
    const parsed = address(fromEnv);
    if (!parsed) throw new CliError(`AGENT_MARKET_PROGRAM_ID ${fromEnv} is not an address`, "set it to the program id of the network, or unset it");
    return parsed;
  }
  return PROGRAM_ID;
}
