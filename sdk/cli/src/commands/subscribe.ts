import { AgentMarket } from "@agent-market/client";

import { apiUrl, readConfig } from "../config.js";
import { CliError, output, type Command } from "../io.js";
import { parse, required } from "../options.js";

const usage = `agent-market subscribe <agent> [--max-price <usdc>] [--api-key <key>] [--api <url>] [--idempotency-key <key>] [--json]

Buys one period of the agent's subscription (or hybrid plan) from the API key's wallet
(--api-key, else $AGENT_MARKET_API_KEY), through its allowance, split 99/1 by the program.
Subscribing again while a period runs adds a period. Pass --idempotency-key to retry safely.
The period is never charged more than --max-price, by default the period price its listing shows.`;

export const subscribe: Command = {
  name: "subscribe",
  summary: "buy a period of an agent's subscription",
  usage,
  async run(args, io) {
    const { values, positionals } = parse(
      args,
      { "api-key": { type: "string" }, api: { type: "string" }, "idempotency-key": { type: "string" }, "max-price": { type: "string" } },
      usage,
      1,
    );
    const agent = required(positionals[0], "<agent>", usage);
    const apiKey = values["api-key"] ?? io.env.AGENT_MARKET_API_KEY;
    if (!apiKey) throw new CliError("no API key", "pass --api-key <key> or set AGENT_MARKET_API_KEY (agent-market keys create makes one)");
    const client = new AgentMarket({ apiKey, baseUrl: apiUrl(io, values.api, await readConfig(io)) });
    let maxPriceUsdc = values["max-price"];
    if (maxPriceUsdc === undefined) {
      const { pricing } = await client.agents.get(agent, { network: apiKey.startsWith("svc_live_") ? "mainnet" : "devnet" });
      // A pay-per-use or metered agent sells no period: the API says so.
      if (pricing.model === "subscription" || pricing.model === "hybrid") maxPriceUsdc = pricing.period_price_usdc;
    }
    const purchase = await client.agents.subscribe(agent, {
      ...(maxPriceUsdc === undefined ? {} : { maxPriceUsdc }),
      ...(values["idempotency-key"] === undefined ? {} : { idempotencyKey: values["idempotency-key"] }),
    });
    output(io, purchase, () => {
      const calls = purchase.included_calls_remaining === null ? "" : `, ${purchase.included_calls_remaining} included calls left`;
      return purchase.status === "pending"
        ? [`Sent ${purchase.charge.amount_usdc} USDC for ${agent} (transaction ${purchase.transaction}); it has not landed yet`]
        : [`Subscribed to ${agent} until ${purchase.expires_at}${calls}: paid ${purchase.charge.amount_usdc} USDC, transaction ${purchase.transaction}`];
    });
  },
};
