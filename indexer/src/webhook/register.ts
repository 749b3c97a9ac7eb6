// Creates or updates the network's Helius webhook with helius-sdk: raw type (rawDevnet on
// devnet), the program's address, successful transactions only, and the Authorization value
// Helius echoes on each delivery. Idempotent: the webhook is found by its URL.
import type { NetworkName } from "@agent-market/program";
import { makeWebhookClient, type WebhookClient } from "helius-sdk/webhooks/client";

/** The REST origin helius-sdk's webhook calls use (fixed in the SDK). */
export const HELIUS_API_ORIGIN = "https://api-mainnet.helius-rpc.com";

export interface WebhookSettings {
  network: NetworkName;
  /** The program whose transactions are delivered: the network's configured id. */
  programAddress: string;
  /** Where Helius delivers: this indexer's public URL + /webhooks/helius. */
  webhookUrl: string;
  authHeader: string;
}

export type WebhookAction = "created" | "updated" | "unchanged";

export async function upsertHeliusWebhook(client: WebhookClient, settings: WebhookSettings): Promise<{ action: WebhookAction; webhookId: string }> {
  const wanted = {
    webhookURL: settings.webhookUrl,
    transactionTypes: ["ANY"],
    accountAddresses: [settings.programAddress],
    webhookType: settings.network === "devnet" ? "rawDevnet" : "raw",
    authHeader: settings.authHeader,
    txnStatus: "success",
  };
  const existing = (await client.getAll()).find((webhook) => webhook.webhookURL === settings.webhookUrl);
  if (!existing) return { action: "created", webhookId: (await client.create(wanted)).webhookID };
  const same =
    existing.webhookType === wanted.webhookType &&
    existing.authHeader === wanted.authHeader &&
    existing.accountAddresses.length === 1 &&
    existing.accountAddresses[0] === settings.programAddress &&
    existing.transactionTypes.length === 1 &&
    existing.transactionTypes[0] === "ANY";
  if (same) return { action: "unchanged", webhookId: existing.webhookID };
  return { action: "updated", webhookId: (await client.update(existing.webhookID, wanted)).webhookID };
}

/**
 * helius-sdk's webhook calls go to a fixed origin; with `apiUrl` set (a stand-in for Helius's
 * REST API, as in the tests) they are sent there instead. Answers a function that undoes it.
 */
export function rerouteHeliusApi(apiUrl: string): () => void {
  const original = globalThis.fetch;
  const target = new URL(apiUrl);
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    if (url.origin !== HELIUS_API_ORIGIN) return original(input, init);
    url.protocol = target.protocol;
    url.host = target.host;
    return original(url, init);
  };
  return () => {
    globalThis.fetch = original;
  };
}

export function heliusClient(apiKey: string): WebhookClient {
  return makeWebhookClient(apiKey);
}
