// What every `agent-market admin` action starts from: the options they share, the signer, the
// RPC and which cluster it serves (told by its genesis hash, so a mainnet RPC is known as such
// whatever --network says), the program id, and the market account.
import { fetchMarket, marketPda, type Market } from "@agent-market/program";
import type { NetworkName } from "@agent-market/program/network";
import { Connection, type Keypair, type PublicKey } from "@solana/web3.js";

import { CliError, UsageError, type Io } from "../io.js";
import { readKeypair } from "../keyfile.js";
import { networkOption, required } from "../options.js";
import { programIdOption } from "../program-id.js";

/** The options of every admin action. */
export const ADMIN_OPTIONS = {
  keypair: { type: "string" },
  rpc: { type: "string" },
  network: { type: "string" },
  "program-id": { type: "string" },
  "confirm-mainnet": { type: "boolean", default: false },
  "dry-run": { type: "boolean", default: false },
} as const;

export const ADMIN_OPTIONS_USAGE = `Every action takes:
  --keypair <file>       the signer, a Solana keypair file: the market authority (any payer for sweep)
  --rpc <url>            the cluster's JSON-RPC (else $AGENT_MARKET_RPC_URL)
  --network devnet|mainnet   checked against the RPC's genesis hash when it is a public cluster
  --program-id <address> the program's address on that network (else $AGENT_MARKET_PROGRAM_ID,
                         else the IDL's)
  --dry-run              show what would be signed and simulate it; send nothing
  --confirm-mainnet      required to sign for mainnet (a mainnet RPC, or --network mainnet)
  --json                 print the result as one JSON object`;

/** Genesis hashes of the public clusters; any other chain (localnet) is taken for devnet. */
const GENESIS: Record<string, "mainnet" | "devnet" | "testnet"> = {
  "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d": "mainnet",
  EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG: "devnet",
  "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY": "testnet",
};

export interface AdminContext {
  io: Io;
  connection: Connection;
  rpcUrl: string;
  network: NetworkName;
  programId: PublicKey;
  signer: Keypair;
  keypairPath: string;
  dryRun: boolean;
  confirmMainnet: boolean;
  json: boolean;
}

interface AdminValues {
  keypair?: string;
  rpc?: string;
  network?: string;
  "program-id"?: string;
  "confirm-mainnet"?: boolean;
  "dry-run"?: boolean;
}

export async function adminContext(io: Io, values: AdminValues, usage: string): Promise<AdminContext> {
  const keypairPath = required(values.keypair, "--keypair", usage);
  const programId = programIdOption(io, values["program-id"], usage);
  const rpcUrl = values.rpc ?? io.env.AGENT_MARKET_RPC_URL;
  if (!rpcUrl) throw new CliError("no RPC URL", "pass --rpc <url> (or set AGENT_MARKET_RPC_URL)");
  if (!URL.canParse(rpcUrl)) throw new UsageError(`--rpc ${rpcUrl} is not a URL`, usage);
  const signer = await readKeypair(keypairPath);
  const connection = new Connection(rpcUrl, "confirmed");
  let genesis: string;
  try {
    genesis = await connection.getGenesisHash();
  } catch (error) {
    throw new CliError(`the RPC at ${rpcUrl} did not answer: ${(error as Error).message}`, "check --rpc");
  }
  const cluster = GENESIS[genesis];
  if (cluster === "testnet") throw new CliError(`${rpcUrl} serves testnet, where the marketplace does not run`, "pass a devnet or mainnet --rpc");
  const asked = values.network === undefined ? undefined : networkOption(values.network, usage);
  if (asked !== undefined && cluster !== undefined && asked !== cluster) {
    throw new CliError(`--network ${asked}, but ${rpcUrl} serves ${cluster}`, `pass the ${asked} RPC, or --network ${cluster}`);
  }
  return {
    io,
    connection,
    rpcUrl,
    network: asked ?? (cluster === "mainnet" ? "mainnet" : "devnet"),
    programId,
    signer,
    keypairPath,
    dryRun: values["dry-run"] === true,
    confirmMainnet: values["confirm-mainnet"] === true,
    json: io.json === true,
  };
}

/** The market account, or null when the program has none at its PDA on this cluster. */
export async function readMarket(ctx: AdminContext): Promise<Market | null> {
  try {
    return await fetchMarket(ctx.connection, marketPda(ctx.programId), { programId: ctx.programId });
  } catch (error) {
    throw new CliError(`cannot read the market through ${ctx.rpcUrl}: ${(error as Error).message}`, "check --rpc and --program-id");
  }
}

/** The market, which must exist. */
export async function existingMarket(ctx: AdminContext): Promise<Market> {
  const market = await readMarket(ctx);
  if (!market) {
    throw new CliError(
      `no market at ${marketPda(ctx.programId).toBase58()} (program ${ctx.programId.toBase58()}) on ${ctx.network}`,
      "initialize it first: agent-market admin init …, or check --program-id and --rpc",
    );
  }
  return market;
}

/** Refuses early, with both keys named, what the program would refuse as NotMarketAuthority. */
export function requireAuthority(ctx: AdminContext, market: Market): void {
  if (!ctx.signer.publicKey.equals(market.authority)) {
    throw new CliError(
      `${ctx.keypairPath} is ${ctx.signer.publicKey.toBase58()}, not the market authority ${market.authority.toBase58()}`,
      "pass the market authority's keypair file as --keypair",
    );
  }
}
