import { AgentMarket, NotFoundError, formatUsdc, type Agent } from "@agent-market/client";
import { fetchAgent, type Agent as AgentAccount } from "@agent-market/program";
import { Connection, PublicKey } from "@solana/web3.js";

import { apiUrl, optionalRpcUrl, readConfig } from "../config.js";
import { CliError, UsageError, type Command } from "../io.js";
import { networkOption, parse, required } from "../options.js";
import { callPriceText } from "../pricing-text.js";
import { programIdOption } from "../program-id.js";
import { table } from "../table.js";

const usage = `agent-market status --agent <address> [--api <url>] [--rpc <url>] [--network devnet|mainnet]
                         [--program-id <address>] [--json]

The agent's listing (status, price, endpoint, last probe) and its account on-chain (status,
locked collateral, signing key). Without --rpc (or one remembered by login), the listing only.
--program-id: the program's address on that network (else $AGENT_MARKET_PROGRAM_ID, else the IDL's).`;

function pricingText(listing: Agent): string {
  const p = listing.pricing;
  return p.model === "subscription" || p.model === "hybrid" ? `${p.model} (${p.period_price_usdc} USDC every ${p.period_secs} s)` : callPriceText(p);
}

export const status: Command = {
  name: "status",
  summary: "an agent's listing status and on-chain collateral",
  usage,
  async run(args, io) {
    const { values } = parse(
      args,
      {
        agent: { type: "string" },
        api: { type: "string" },
        rpc: { type: "string" },
        network: { type: "string" },
        "program-id": { type: "string" },
      },
      usage,
    );
    const agentId = required(values.agent, "--agent", usage);
    let address: PublicKey;
    try {
      address = new PublicKey(agentId);
    } catch {
      throw new UsageError(`--agent ${agentId} is not an address`, usage);
    }
    const network = networkOption(values.network, usage);
    const programId = programIdOption(io, values["program-id"], usage);
    const config = await readConfig(io);
    const client = new AgentMarket({ baseUrl: apiUrl(io, values.api, config) });

    let listing: Agent | null = null;
    try {
      listing = await client.agents.get(agentId, { network });
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    const rpc = optionalRpcUrl(io, values.rpc, config);
    let account: AgentAccount | null | undefined;
    if (rpc !== undefined) account = await fetchAgent(new Connection(rpc, "confirmed"), address, { programId });

    if (io.json) {
      const onChain =
        account === undefined || account === null
          ? account ?? null
          : {
              status: account.status,
              creator: account.creator.toBase58(),
              collateral_usdc: formatUsdc(account.collateralUsdc),
              signing_key: new PublicKey(account.signingKey).toBase58(),
              endpoint: account.endpoint,
              max_execution_secs: account.maxExecutionSecs,
            };
      io.out(JSON.stringify({ agent: agentId, listing, on_chain: onChain }, null, 2));
    } else {
      const rows: string[][] = [];
      if (listing) {
        rows.push(
          ["listing", listing.status],
          ["name", listing.name],
          ["price", pricingText(listing)],
          ["endpoint", listing.endpoint],
          ["signing key", listing.signing_key],
          ["last probe", listing.last_probe ? `${listing.last_probe.at} (${listing.last_probe.latency_ms} ms)` : "none"],
        );
      } else {
        rows.push(["listing", `not listed on ${network}`]);
      }
      if (account) {
        const minimum = listing ? ` (minimum ${listing.minimum_collateral_usdc})` : "";
        rows.push(
          ["on-chain", account.status],
          ["collateral", `${formatUsdc(account.collateralUsdc)} USDC${minimum}`],
          ["creator", account.creator.toBase58()],
          ["on-chain signing key", new PublicKey(account.signingKey).toBase58()],
        );
      } else {
        rows.push(["on-chain", account === null ? "no agent account" : "not read (pass --rpc)"]);
      }
      for (const line of table(["", ""], rows).slice(1)) io.out(line);
    }
    if (!listing && !account) {
      throw new CliError(`no agent ${agentId}${account === undefined ? " listed" : ""} on ${network}`, "check the address and --network");
    }
    if (!listing && account) io.err(`Registered but not listed: list it with agent-market register … --agent ${agentId}`);
  },
};
