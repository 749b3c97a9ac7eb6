#!/usr/bin/env node
// `npm run helius-webhook --workspace @agent-market/indexer`: creates or updates the Helius
// webhook that delivers the program's transactions to this indexer.
//   HELIUS_API_KEY                 the Helius API key
//   INDEXER_PUBLIC_URL             this indexer's public origin (the webhook is <it>/webhooks/helius)
//   INDEXER_HELIUS_WEBHOOK_AUTH    the Authorization value Helius echoes (16 characters at least)
//   INDEXER_NETWORK                devnet (or localnet) or mainnet
//   DEVNET_PROGRAM_ID, MAINNET_PROGRAM_ID   the network's program id (on localnet the IDL's when unset)
//   HELIUS_API_URL                 optional: send the SDK's REST calls there instead of Helius
import { EnvReader } from "@agent-market/service";

import { heliusWebhookAuthOf, networkOf, programIdOf } from "../config.js";
import { heliusClient, rerouteHeliusApi, upsertHeliusWebhook } from "./register.js";
import { WEBHOOK_PATH } from "./helius.js";

// Read by the indexer's own rules (config.ts) for the variables both use, so that the two agree.
const reader = new EnvReader(process.env);
const apiKey = reader.required("HELIUS_API_KEY", "the Helius API key");
const publicUrl = reader.required("INDEXER_PUBLIC_URL", "this indexer's public origin (https://indexer.example)");
if (publicUrl) reader.url("INDEXER_PUBLIC_URL", publicUrl, ["http:", "https:"]);
const authHeader = heliusWebhookAuthOf(reader) ?? reader.required("INDEXER_HELIUS_WEBHOOK_AUTH", "the Authorization value Helius echoes");
const { network, localnet } = networkOf(reader);
const programId = programIdOf(reader, network, localnet);
if (reader.problems.length > 0) {
  console.error(`cannot set up the Helius webhook:\n${reader.problems.map((problem) => `  - ${problem}`).join("\n")}`);
  process.exit(2);
}
if (process.env.HELIUS_API_URL) rerouteHeliusApi(process.env.HELIUS_API_URL);
const webhookUrl = new URL(WEBHOOK_PATH, publicUrl).toString();
const result = await upsertHeliusWebhook(heliusClient(apiKey), {
  network,
  programAddress: programId.toBase58(),
  webhookUrl,
  authHeader,
});
console.log(JSON.stringify({ ...result, webhookUrl }));
