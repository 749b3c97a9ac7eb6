import { AgentMarket } from "@agent-market/client";

import { chargeText } from "../charge-text.js";
import { apiUrl, readConfig } from "../config.js";
import { CliError, output, UsageError, type Command } from "../io.js";
import { integerOption, parse, required } from "../options.js";
import { table } from "../table.js";

const usage = `agent-market executions list [--agent <address>] [--limit <n>] [--api-key <key>] [--api <url>] [--json]
agent-market executions get <execution id> [--api-key <key>] [--api <url>] [--json]

The executions paid by the API key's wallet (--api-key, else $AGENT_MARKET_API_KEY), through any
of its keys, newest first (list: 20 unless --limit, up to 100).`;

export const executions: Command = {
  name: "executions",
  summary: "list the wallet's executions, or show one",
  usage,
  async run(args, io) {
    const [action, ...rest] = args;
    if (action !== "list" && action !== "get") {
      throw new UsageError(action === undefined ? "executions needs list or get" : `unknown executions command ${action}`, usage);
    }
    const { values, positionals } = parse(
      rest,
      { agent: { type: "string" }, limit: { type: "string" }, "api-key": { type: "string" }, api: { type: "string" } },
      usage,
      action === "get" ? 1 : 0,
    );
    const apiKey = values["api-key"] ?? io.env.AGENT_MARKET_API_KEY;
    if (!apiKey) throw new CliError("no API key", "pass --api-key <key> or set AGENT_MARKET_API_KEY (agent-market keys create makes one)");
    const client = new AgentMarket({ apiKey, baseUrl: apiUrl(io, values.api, await readConfig(io)) });
    if (action === "get") {
      const execution = await client.executions.get(required(positionals[0], "<execution id>", usage));
      output(io, execution, () => {
        const { charge } = execution;
        const rows = [
          ["execution", execution.id],
          ["agent", execution.agent],
          ["status", execution.status],
          ["charged", chargeText(charge)],
          // What the escrow held, and what of it went back: a metered call's unused units, a refund's whole.
          ...(charge.held_usdc === null ? [] : [["held", `${charge.held_usdc} USDC`], ["returned", `${charge.returned_usdc} USDC`]]),
          ...(charge.max_units === null ? [] : [["units", `${charge.units ?? "none yet"} of at most ${charge.max_units}`]]),
          ["created", execution.created_at],
          ...Object.entries(execution.transactions)
            .filter(([, signature]) => signature !== null)
            .map(([name, signature]) => [`${name} transaction`, String(signature)]),
        ];
        if (execution.failure) rows.push(["failure", `${execution.failure.code}: ${execution.failure.message}`]);
        return [...table(["", ""], rows).slice(1), "", JSON.stringify(execution.output, null, 2)];
      });
      return;
    }
    const limit = values.limit === undefined ? 20 : integerOption(values.limit, "--limit", usage, 1, 100);
    const page = await client.executions.list({ limit, ...(values.agent === undefined ? {} : { agent: values.agent }) });
    output(io, page.data, () =>
      table(
        ["ID", "AGENT", "STATUS", "CHARGED", "RETURNED", "UNITS", "CREATED"],
        page.data.map((e) => [
          e.id,
          e.agent,
          e.status,
          e.charge.charged_usdc,
          e.charge.returned_usdc,
          // A metered call's units of its most; a fixed-price call has none to show.
          e.charge.max_units === null ? "" : `${e.charge.units ?? "-"}/${e.charge.max_units}`,
          e.created_at,
        ]),
      ),
    );
  },
};
