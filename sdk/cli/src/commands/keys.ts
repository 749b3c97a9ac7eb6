import { formatUsdc } from "@agent-market/client";

import { readConfig } from "../config.js";
import { output, UsageError, type Command } from "../io.js";
import { parse, required, usdcOption } from "../options.js";
import { storedSession } from "../session.js";
import { table } from "../table.js";

const usage = `agent-market keys create --name <name> [--live] [--cap <usdc>] [--json]
agent-market keys list [--json]
agent-market keys revoke <key id> [--json]

API keys of the signed-in wallet (agent-market login first). A key is for devnet (svc_test_) unless
--live (mainnet, svc_live_); --cap sets its spending cap in USDC. The secret is printed once, at
creation: keep it in a secrets manager.`;

export const keys: Command = {
  name: "keys",
  summary: "create, list and revoke API keys",
  usage,
  async run(args, io) {
    const [action, ...rest] = args;
    const config = await readConfig(io);
    switch (action) {
      case "create": {
        const { values } = parse(
          rest,
          { name: { type: "string" }, live: { type: "boolean", default: false }, cap: { type: "string" }, api: { type: "string" } },
          usage,
        );
        const name = required(values.name, "--name", usage);
        const cap = values.cap === undefined ? undefined : formatUsdc(usdcOption(values.cap, "--cap", usage));
        const session = await storedSession(io, config, values.api);
        const key = await session.keys.create({
          name,
          environment: values.live ? "live" : "test",
          ...(cap === undefined ? {} : { spending_cap_usdc: cap }),
        });
        if (io.json) {
          io.out(JSON.stringify(key, null, 2));
        } else {
          io.out(key.secret);
          io.err(`Created ${key.id} (${key.environment}, ${key.network}${cap ? `, cap ${cap} USDC` : ""}). The secret above is shown once:`);
          io.err(`  export AGENT_MARKET_API_KEY=${key.secret}`);
        }
        return;
      }
      case "list": {
        const { values } = parse(rest, { api: { type: "string" } }, usage);
        const session = await storedSession(io, config, values.api);
        const all = [];
        for await (const page of session.keys.pages({ limit: 100 })) all.push(...page.data);
        if (io.json) {
          io.out(JSON.stringify(all, null, 2));
          return;
        }
        const rows = all.map((k) => [k.id, k.name, `${k.prefix}…${k.last4}`, k.status, k.spent_usdc, k.spending_cap_usdc ?? "none", String(k.execution_count)]);
        for (const line of table(["ID", "NAME", "KEY", "STATUS", "SPENT", "CAP", "CALLS"], rows)) io.out(line);
        return;
      }
      case "revoke": {
        const { values, positionals } = parse(rest, { api: { type: "string" } }, usage, 1);
        const id = required(positionals[0], "<key id>", usage);
        const session = await storedSession(io, config, values.api);
        const key = await session.keys.revoke(id);
        output(io, key, () => [`Revoked ${key.id} (${key.name})`]);
        return;
      }
      default:
        throw new UsageError(action === undefined ? "keys needs create, list or revoke" : `unknown keys command ${action}`, usage);
    }
  },
};
