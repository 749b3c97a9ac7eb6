#!/usr/bin/env node
// `npm run helius-webhook --workspace @agent-market/indexer`: creates or updates the Helius
// webhook that delivers the program's transactions to this indexer.
//   HELIUS_API_KEY                 the Helius API key
//   INDEXER_PUBLIC_URL             this indexer's public origin (the webhook is <it>/webhooks/helius)
//   INDEXER_HELIUS_WEBHOOK_AUTH    the Authorization value Helius echoes (16 characters at least)
//   INDEXER_NETWORK                devnet (or localnet) or mainnet
//   DEVNET_PROGRAM_ID, MAINNET_PROGRAM_ID   the network's program id (on localnet the IDL's when unset)
//   HELIUS_API_URL                 optional: send the SDK's REST calls there instead of Helius
import { programIdOf } from "../config.js";
import { heliusClient, rerouteHeliusApi, upsertHeliusWebhook } from "./register.js";
import { WEBHOOK_PATH } from "./helius.js";

const problems: string[] = [];
const need = (name: string) => {
  const value = process.env[name];
  if (!value) problems.push(`${name}: required`);
  return value ?? "";
};
const apiKey = need("HELIUS_API_KEY");
const publicUrl = need("INDEXER_PUBLIC_URL");
const authHeader = need("INDEXER_HELIUS_WEBHOOK_AUTH");
const rawNetwork = process.env.INDEXER_NETWORK ?? "devnet";
const network = rawNetwork === "mainnet" ? "mainnet" : rawNetwork === "devnet" || rawNetwork === "localnet" ? "devnet" : null;
if (!network) problems.push(`INDEXER_NETWORK: expected devnet, mainnet or localnet`);
const programId = network ? programIdOf(process.env, network, problems, rawNetwork === "localnet") : null;
if (authHeader && authHeader.length < 16) problems.push("INDEXER_HELIUS_WEBHOOK_AUTH: at least 16 characters");
if (problems.length > 0) {
  console.error(`cannot set up the Helius webhook:\n  ${problems.join("\n  ")}`);
  process.exit(2);
}
if (process.env.HELIUS_API_URL) rerouteHeliusApi(process.env.HELIUS_API_URL);
const webhookUrl = new URL(WEBHOOK_PATH, publicUrl).toString();
const result = await upsertHeliusWebhook(heliusClient(apiKey), {
  network: network!,
  programAddress: programId!.toBase58(),
  webhookUrl,
  authHeader,
});
console.log(JSON.stringify({ ...result, webhookUrl }));
