import { resolve } from "node:path";

import { AuthenticationError, WalletSession } from "@agent-market/client";

import { configPath, readConfig, writeConfig } from "../config.js";
import { output, type Command } from "../io.js";
import { readKeypair } from "../keyfile.js";
import { parse, required } from "../options.js";
import { walletSigner } from "../session.js";

const loginUsage = `agent-market login --keypair <wallet file> --api <url> [--rpc <url>]

Signs in with the wallet (Sign-In With Solana: the keypair signs the API's challenge) and keeps
the session token, the API URL, the keypair's path and the RPC URL in
$AGENT_MARKET_HOME/config.json (default ~/.agent-market), readable by you alone (0600).`;

export const login: Command = {
  name: "login",
  summary: "sign in with a wallet keypair and keep the session",
  usage: loginUsage,
  async run(args, io) {
    const { values } = parse(args, { keypair: { type: "string" }, api: { type: "string" }, rpc: { type: "string" } }, loginUsage);
    const keypairPath = resolve(required(values.keypair, "--keypair", loginUsage));
    const api = required(values.api, "--api", loginUsage);
    const keypair = await readKeypair(keypairPath);
    const session = await WalletSession.signIn(api, walletSigner(keypair));
    const config = await readConfig(io);
    await writeConfig(io, {
      ...config,
      api: session.baseUrl,
      ...(values.rpc === undefined ? {} : { rpc: values.rpc }),
      keypair: keypairPath,
      session: { token: session.token, wallet: session.address, expires_at: session.session.expires_at },
    });
    output(io, { wallet: session.address, expires_at: session.session.expires_at, config: configPath(io) }, () => [
      `Signed in as ${session.address} until ${session.session.expires_at}`,
    ]);
    io.err(`Session kept in ${configPath(io)}`);
  },
};

const logoutUsage = `agent-market logout

Signs the session out at the API and forgets its token.`;

export const logout: Command = {
  name: "logout",
  summary: "sign out and forget the session",
  usage: logoutUsage,
  async run(args, io) {
    parse(args, {}, logoutUsage);
    const config = await readConfig(io);
    if (!config.session || !config.api) {
      output(io, { signed_out: null }, () => ["Not signed in"]);
      return;
    }
    try {
      await (await WalletSession.resume(config.api, config.session.token)).signOut();
    } catch (error) {
      // An expired or revoked session is as signed out as it gets.
      if (!(error instanceof AuthenticationError)) throw error;
    }
    const { session, ...rest } = config;
    await writeConfig(io, rest);
    output(io, { signed_out: session.wallet }, () => [`Signed out ${session.wallet}`]);
  },
};
