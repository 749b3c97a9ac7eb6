import {
  AgentMarket,
  ConflictError,
  ExecutionFailedError,
  PaymentRequiredError,
  StreamInterruptedError,
  callPriceUsdc,
  formatUsdc,
  type Execution,
} from "@agent-market/client";
import { USDC_WIRE_PATTERN } from "@agent-market/program/usdc";

import { chargeText } from "../charge-text.js";
import { apiUrl, readConfig } from "../config.js";
import { CliError, type Command } from "../io.js";
import { jsonObjectOption, parse, required } from "../options.js";

const usage = `agent-market execute <agent> --task <text> [--params '<json object>'] [--max-price <usdc>] [--api-key <key>]
                     [--api <url>] [--idempotency-key <key>] [--stream] [--json]

Runs an agent, paid from the API key's wallet (--api-key, else $AGENT_MARKET_API_KEY), and prints
its output, then what it cost. The call is never charged more than --max-price, by default the
price its listing shows now (read first): a higher price is refused before anything is sent. A
metered agent's call holds up to --max-price (its listing's most units by default), is charged
the units it used and returns the rest. --json prints the whole execution. When the wallet cannot pay, it says by how much and how
to raise the allowance.

--stream asks for the output as the agent produces it and prints each piece as it arrives (an
agent that does not stream arrives in one piece), then the charge. A refunded call says so after
what had arrived, which is not charged. If the stream breaks, the execution still finishes: read
it with agent-market executions get <id>.`;

function paymentAdvice(error: PaymentRequiredError): { message: string; next: string } {
  const usdc = (value: bigint | null) => (value === null ? "?" : formatUsdc(value));
  switch (error.code) {
    case "insufficient_allowance":
      return {
        message: `this call costs ${usdc(error.required)} USDC; the wallet allows the marketplace ${usdc(error.allowance)} USDC (balance ${usdc(error.balance)} USDC)`,
        next: `agent-market allowance set ${usdc(error.required)} (it replaces the allowance: approve more to cover several calls)`,
      };
    case "insufficient_balance": {
      const shortfall = error.required !== null && error.balance !== null ? formatUsdc(error.required - error.balance) : "?";
      return {
        message: `this call costs ${usdc(error.required)} USDC; the wallet holds ${usdc(error.balance)} USDC`,
        next: `send at least ${shortfall} USDC (mint ${error.mint ?? "?"}, ${error.network ?? "?"}) to the wallet, then agent-market allowance set <usdc> if needed`,
      };
    }
    case "spending_cap_reached":
      return {
        message: `this call costs ${usdc(error.required)} USDC, past the key's spending cap of ${usdc(error.spendingCap)} USDC`,
        next: "use a key with a higher cap: agent-market keys create --name <name> --cap <usdc>",
      };
    default:
      return { message: error.message, next: "subscribe to the agent first" };
  }
}

export const execute: Command = {
  name: "execute",
  summary: "run an agent and print its output and charge",
  usage,
  async run(args, io) {
    const { values, positionals } = parse(
      args,
      {
        task: { type: "string" },
        params: { type: "string", default: "{}" },
        "api-key": { type: "string" },
        api: { type: "string" },
        "idempotency-key": { type: "string" },
        "max-price": { type: "string" },
        stream: { type: "boolean", default: false },
      },
      usage,
      1,
    );
    const agent = required(positionals[0], "<agent>", usage);
    const task = required(values.task, "--task", usage);
    const parameters = jsonObjectOption(values.params, "--params", usage);
    const apiKey = values["api-key"] ?? io.env.AGENT_MARKET_API_KEY;
    if (!apiKey) throw new CliError("no API key", "pass --api-key <key> or set AGENT_MARKET_API_KEY (agent-market keys create makes one)");
    const config = await readConfig(io);
    const client = new AgentMarket({ apiKey, baseUrl: apiUrl(io, values.api, config) });

    let maxPriceUsdc = values["max-price"];
    if (maxPriceUsdc === undefined) {
      const listing = await client.agents.get(agent, { network: apiKey.startsWith("svc_live_") ? "mainnet" : "devnet" });
      maxPriceUsdc = callPriceUsdc(listing.pricing);
    } else if (!new RegExp(USDC_WIRE_PATTERN).test(maxPriceUsdc)) {
      throw new CliError(`--max-price must be USDC with six decimals, like 0.250000, got "${maxPriceUsdc}"`, usage);
    }

    const options = { maxPriceUsdc, ...(values["idempotency-key"] === undefined ? {} : { idempotencyKey: values["idempotency-key"] }) };
    let execution: Execution;
    // Whether the output was printed as it arrived: then it is not printed again.
    let streamed = false;
    const write = io.write ?? io.out;
    let last = "";
    // The line the streamed output leaves open is closed before anything else is printed.
    const endLine = () => {
      if (streamed && !last.endsWith("\n")) write("\n");
    };
    try {
      if (values.stream) {
        const stream = await client.agents.executeStream(agent, { task, parameters }, options);
        for await (const chunk of stream) {
          if (io.json || chunk.text === "") continue;
          write(chunk.text);
          streamed = true;
          last = chunk.text;
        }
        endLine();
        execution = await stream.result;
      } else {
        execution = await client.agents.execute(agent, { task, parameters }, options);
      }
    } catch (error) {
      if (streamed) {
        endLine();
        io.err("(the output above is all that arrived)");
      }
      if (error instanceof ConflictError && (error.code === "price_above_maximum" || error.code === "agent_terms_changed")) {
        throw new CliError(
          `${error.code}: ${error.message}`,
          error.code === "price_above_maximum"
            ? `pass --max-price ${String(error.details.price_usdc ?? "<usdc>")} to agree to the new price`
            : "the creator changed the agent's price on chain; wait until its listing shows the new terms",
        );
      }
      if (error instanceof PaymentRequiredError) {
        const { message, next } = paymentAdvice(error);
        throw new CliError(`${error.code}: ${message}; nothing was charged`, next);
      }
      if (error instanceof ExecutionFailedError) {
        const refund = error.refundTransaction ? `; the escrow was refunded (transaction ${error.refundTransaction})` : "; nothing was charged";
        throw new CliError(
          `the agent failed: ${error.message} (${error.code}, execution ${error.execution.id})${refund}`,
          "try again later, or another agent",
        );
      }
      if (error instanceof StreamInterruptedError) {
        throw new CliError(
          `the stream ended early: ${error.message} (${error.code}); the execution goes on and settles or is refunded`,
          error.executionId ? `agent-market executions get ${error.executionId}` : "agent-market executions list",
        );
      }
      throw error;
    }
    if (io.json) {
      io.out(JSON.stringify(execution, null, 2));
      return;
    }
    if (!streamed) io.out(JSON.stringify(execution.output, null, 2));
    const { charge } = execution;
    io.err(
      `Charged ${chargeText(charge)} (${charge.creator_share_usdc} to the creator, ${charge.fee_usdc} fee) for ${execution.id}` +
        (execution.transactions.settlement ? `, settled in ${execution.transactions.settlement}` : ""),
    );
  },
};
