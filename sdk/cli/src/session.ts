// The wallet session of `login`, for the commands that manage keys and the allowance.
import { AuthenticationError, WalletSession, type WalletSigner } from "@agent-market/client";
import { ed25519Sign } from "@agent-market/program";
import type { Keypair } from "@solana/web3.js";

import { apiUrl, type CliConfig } from "./config.js";
import { CliError, type Io } from "./io.js";

export function walletSigner(keypair: Keypair): WalletSigner {
  return { publicKey: keypair.publicKey, signMessage: (message) => ed25519Sign(keypair.secretKey, message) };
}

const LOGIN = "agent-market login --keypair <wallet file> --api <url>";

/** The stored session, checked with the API. */
export async function storedSession(io: Io, config: CliConfig, apiOption: string | undefined): Promise<WalletSession> {
  if (!config.session) throw new CliError("not signed in", LOGIN);
  try {
    return await WalletSession.resume(apiUrl(io, apiOption, config), config.session.token);
  } catch (error) {
    if (error instanceof AuthenticationError) throw new CliError(`the session of ${config.session.wallet} has ended (${error.code})`, LOGIN);
    throw error;
  }
}
