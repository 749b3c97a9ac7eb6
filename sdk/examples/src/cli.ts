// The command line of an example agent:
//   node dist/<agent>.js --key <keypair.json> --marketplace-key <base58> --agent <address>… [--port N] [--host H]
//   node dist/<agent>.js --listing
// The marketplace key may come from AGENT_MARKET_MARKETPLACE_KEY instead.
import { parseArgs } from "node:util";

import { listingHash, readKeypairFile, type ListingDocument } from "@agent-market/creator";
import { toHex } from "@agent-market/program";

import type { RunningAgent, StartOptions } from "./start.js";

const USAGE = `options:
  --key <file>              the agent's signing key: a Solana CLI keypair file (JSON array of 64 numbers)
  --marketplace-key <key>   the marketplace's request signing key, base58 (or AGENT_MARKET_MARKETPLACE_KEY)
  --agent <address>         an agent account this service answers for (repeat for several); others are refused
  --port <n>                port to listen on (default 8080; 0 takes a free one)
  --host <address>          address to listen on (default 127.0.0.1)
  --listing                 print the listing document and its hash, and exit`;

export async function runCli(
  name: string,
  listing: ListingDocument,
  start: (options: StartOptions) => Promise<RunningAgent>,
  argv = process.argv.slice(2),
): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      key: { type: "string" },
      "marketplace-key": { type: "string" },
      agent: { type: "string", multiple: true },
      port: { type: "string", default: "8080" },
      host: { type: "string", default: "127.0.0.1" },
      listing: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(`${name}: an example Agent Market agent\n${USAGE}`);
    return;
  }
  if (values.listing) {
    console.log(JSON.stringify({ listing, listing_hash: toHex(listingHash(listing)) }, null, 2));
    return;
  }
  const marketplaceKey = values["marketplace-key"] ?? process.env.AGENT_MARKET_MARKETPLACE_KEY;
  if (!values.key || !marketplaceKey || !values.agent) {
    throw new Error(`--key, --marketplace-key and --agent are required\n${USAGE}`);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: not a port number: ${values.port}`);

  const agent = await start({
    signingKey: await readKeypairFile(values.key),
    marketplaceKey,
    agents: values.agent,
    port,
    host: values.host,
  });
  const listing_hash = toHex(listingHash(listing));
  console.log(JSON.stringify({ agent: name, url: agent.url, signing_key: agent.publicKey, listing_hash }));
  const stop = () => void agent.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/** Runs `main`, printing a failure as one line rather than a stack trace. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
