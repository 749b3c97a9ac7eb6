import { randomBytes } from "node:crypto";

import {
  AgentMarket,
  AgentMarketError,
  WalletSession,
  formatUsdc,
  parseUsdc,
  type Agent,
  type Marketplace,
} from "@agent-market/client";
import {
  MAX_EXECUTION_SECS,
  agentPda,
  errorFromCode,
  fetchAgent,
  fetchMarket,
  listingHash,
  parseSigningKeyProof,
  registerAgentInstructions,
  signSigningKeyProof,
  toHex,
  verifySigningKeyProof,
  withComputeBudget,
  type ListingDocument,
} from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Connection, PublicKey, SendTransactionError, Transaction, sendAndConfirmTransaction } from "@solana/web3.js";

import { adviceFor } from "../advice.js";
import { readJsonFile } from "../files.js";
import { CliError, UsageError, type Command, type Io } from "../io.js";
import { readKeypair } from "../keyfile.js";
import { integerOption, networkOption, parse, required, usdcOption } from "../options.js";
import { programIdOption } from "../program-id.js";
import { registerPricing } from "../register-pricing.js";
import { walletSigner } from "../session.js";

const usage = `agent-market register --keypair <creator wallet file> --signing-key <keypair file> --endpoint <url>
                      --listing <listing.json> --price <usdc> --api <url> --rpc <url>
                      [--price-per-unit <usdc> --unit <name> --max-units-per-call <n>, instead of --price]
                      [--collateral <usdc>] [--max-execution-secs <n>] [--network devnet|mainnet]
                      [--agent <address>] [--agent-id <base58>] [--program-id <address>] [--json]
       agent-market register … --signing-key <public key> --key-proof <base58> --agent-id <base58> …

The whole creator checklist, step by step: reads the listing document (name, description, tags,
input_schema, output_schema) and hashes it; reads the marketplace (USDC mint, minimum collateral)
and checks --rpc serves the same market; signs in with the wallet; asks the service's GET /health
which key it signs with; checks the wallet's USDC covers the collateral (default: the minimum); sends register_agent (a random agent id; the collateral is
locked; pay per use at --price; max execution time default 30 s); then lists the agent, which
makes the marketplace probe your endpoint. On failure it says what to do next.

A metered agent is registered with --price-per-unit, --unit (its name, shown to callers: "100
words") and --max-units-per-call instead of --price: each call is charged the units it used, at
most --max-units-per-call, whose price must reach the market's minimum price per call.

--program-id is the program's address on that network (else $AGENT_MARKET_PROGRAM_ID, else the
IDL's); it must be the one the API names for the network.

--agent <address> lists an agent registered already (after fixing what made listing fail),
without registering another.

The program registers a signing key only with its proof: the key's signature over the agent's
address and the creator's wallet. With a keypair file as --signing-key the proof is signed here.
When the key lives elsewhere (its service, an HSM), give its public key as --signing-key, pick an
agent id, and pass the proof that \`agent-market key-proof --signing-key <file> --creator <wallet>
--agent-id <id>\` prints where the key is, as --key-proof, with that --agent-id.`;

function listingDocument(value: unknown, path: string): ListingDocument {
  const doc = value as Partial<ListingDocument> | null;
  const problems: string[] = [];
  if (typeof doc !== "object" || doc === null) throw new CliError(`${path} is not a JSON object`);
  if (typeof doc.name !== "string") problems.push("name must be a string");
  if (typeof doc.description !== "string") problems.push("description must be a string");
  if (!Array.isArray(doc.tags) || !doc.tags.every((t) => typeof t === "string")) problems.push("tags must be an array of strings");
  for (const field of ["input_schema", "output_schema"] as const) {
    if (typeof doc[field] !== "object" || doc[field] === null) problems.push(`${field} must be a JSON Schema object`);
  }
  if (problems.length > 0) throw new CliError(`${path}: ${problems.join("; ")}`, "a listing file holds name, description, tags, input_schema and output_schema");
  return { name: doc.name!, description: doc.description!, tags: doc.tags!, input_schema: doc.input_schema, output_schema: doc.output_schema };
}

/** Numbered progress on stderr, so stdout keeps only the result. */
function progress(io: Io, total: number) {
  let step = 0;
  return (line: string) => io.err(`[${++step}/${total}] ${line}`);
}

/** The program's error in a failed send, by name, or the RPC's message. */
function sendFailure(error: unknown): string {
  if (error instanceof SendTransactionError) {
    const match = /custom program error: (0x[0-9a-f]+)/i.exec(error.message);
    const program = match ? errorFromCode(Number(match[1])) : null;
    return program ? `${program.name}: ${program.msg}` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The key a service's GET /health names, or why there is none (the route is optional). */
async function serviceKey(endpoint: string): Promise<{ key?: string; problem?: string }> {
  const url = new URL(endpoint);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/health`;
  try {
    const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(5_000) });
    const body = (await response.json().catch(() => null)) as { signing_key?: unknown } | null;
    if (typeof body?.signing_key === "string") return { key: body.signing_key };
    return { problem: `answered ${response.status} without a signing_key` };
  } catch (error) {
    const cause = (error as Error).cause;
    return { problem: `no answer (${cause instanceof Error ? cause.message : (error as Error).message})` };
  }
}

export const register: Command = {
  name: "register",
  summary: "register an agent on-chain and list it (the creator checklist)",
  usage,
  async run(args, io) {
    const { values } = parse(
      args,
      {
        keypair: { type: "string" },
        "signing-key": { type: "string" },
        endpoint: { type: "string" },
        listing: { type: "string" },
        price: { type: "string" },
        "price-per-unit": { type: "string" },
        unit: { type: "string" },
        "max-units-per-call": { type: "string" },
        collateral: { type: "string" },
        "max-execution-secs": { type: "string", default: "30" },
        api: { type: "string" },
        rpc: { type: "string" },
        network: { type: "string" },
        agent: { type: "string" },
        "agent-id": { type: "string" },
        "key-proof": { type: "string" },
        "program-id": { type: "string" },
      },
      usage,
    );
    const keypairPath = required(values.keypair, "--keypair", usage);
    const signingKeyPath = required(values["signing-key"], "--signing-key", usage);
    const endpoint = required(values.endpoint, "--endpoint", usage);
    if (!URL.canParse(endpoint)) throw new UsageError(`--endpoint ${endpoint} is not a URL`, usage);
    const listingPath = required(values.listing, "--listing", usage);
    const pricing = registerPricing(values, usage);
    const maxExecutionSecs = integerOption(values["max-execution-secs"], "--max-execution-secs", usage, 1, MAX_EXECUTION_SECS);
    const api = required(values.api, "--api", usage);
    const rpc = required(values.rpc, "--rpc", usage);
    const network = networkOption(values.network, usage);
    const programId = programIdOption(io, values["program-id"], usage);
    let existing: PublicKey | undefined;
    if (values.agent !== undefined) {
      try {
        existing = new PublicKey(values.agent);
      } catch {
        throw new UsageError(`--agent ${values.agent} is not an address`, usage);
      }
    }
    const creator = await readKeypair(keypairPath);
    let agentId: Uint8Array | undefined;
    if (values["agent-id"] !== undefined) {
      let bytes: Uint8Array | undefined;
      try {
        bytes = utils.bytes.bs58.decode(values["agent-id"]);
      } catch {
        bytes = undefined;
      }
      if (bytes?.length !== 16) throw new UsageError(`--agent-id ${values["agent-id"]} is not base58 of 16 bytes`, usage);
      agentId = bytes;
    }
    // With --key-proof the key stays where it is: --signing-key is its public key.
    let signing: { publicKey: PublicKey; secretKey?: Uint8Array };
    let givenProof: Uint8Array | undefined;
    if (values["key-proof"] !== undefined) {
      givenProof = parseSigningKeyProof(values["key-proof"]) ?? undefined;
      if (!givenProof) throw new UsageError(`--key-proof is not base58 of a 64-byte signature`, usage);
      if (!existing && !agentId) throw new UsageError("--key-proof names an agent: pass the --agent-id it was made for", usage);
      try {
        signing = { publicKey: new PublicKey(signingKeyPath) };
      } catch {
        throw new UsageError(`with --key-proof, --signing-key is the key's public key; ${signingKeyPath} is not one`, usage);
      }
    } else {
      signing = await readKeypair(signingKeyPath);
    }
    const connection = new Connection(rpc, "confirmed");
    const step = progress(io, existing ? 7 : 8);

    const doc = listingDocument(await readJsonFile(listingPath, "listing"), listingPath);
    const hash = listingHash(doc);
    step(`Listing "${doc.name}": listing hash ${toHex(hash)}`);

    const marketplace: Marketplace = await new AgentMarket({ baseUrl: api }).marketplace();
    const served = marketplace.networks.find((n) => n.name === network);
    if (!served) throw new CliError(`${api} serves no ${network}`, `pass --network ${marketplace.networks.map((n) => n.name).join(" or ")}`);
    const minimum = parseUsdc(served.minimum_collateral_usdc);
    const collateral = values.collateral === undefined ? minimum : usdcOption(values.collateral, "--collateral", usage);
    if (collateral < minimum) {
      throw new UsageError(`--collateral ${formatUsdc(collateral)} is below the marketplace minimum ${served.minimum_collateral_usdc} USDC`, usage);
    }
    step(`Marketplace on ${network}: USDC mint ${served.usdc_mint}, minimum collateral ${served.minimum_collateral_usdc} USDC`);

    const mint = new PublicKey(served.usdc_mint);
    const market = await fetchMarket(connection, undefined, { programId }).catch((error: unknown) => {
      throw new CliError(`cannot read the market through --rpc: ${(error as Error).message}`, "check the --rpc URL");
    });
    if (served.program_id !== programId.toBase58()) {
      throw new CliError(
        `the API runs program ${served.program_id} on ${network}; this CLI uses ${programId.toBase58()}`,
        `pass --program-id ${served.program_id} (or set AGENT_MARKET_PROGRAM_ID) if you trust that program`,
      );
    }
    if (!market || !market.usdcMint.equals(mint)) {
      throw new CliError(`--rpc does not serve the market the API serves on ${network}`, `point --rpc at the ${network} cluster the API uses`);
    }
    if (pricing.mostPerCallUsdc < market.minPricePerCallUsdc) {
      const what = pricing.chain.kind === "Metered" ? "--price-per-unit × --max-units-per-call" : "--price";
      throw new UsageError(
        `${what} ${formatUsdc(pricing.mostPerCallUsdc)} is below the market's minimum price per call, ${formatUsdc(market.minPricePerCallUsdc)} USDC`,
        usage,
      );
    }
    step("The RPC serves the same market");

    const session = await WalletSession.signIn(api, walletSigner(creator));
    step(`Signed in as ${session.address}`);

    // Before any collateral is locked: a service signing with another key would fail the probe.
    const health = await serviceKey(endpoint);
    if (health.key !== undefined && health.key !== signing.publicKey.toBase58()) {
      throw new CliError(
        `${endpoint} signs with ${health.key}, not --signing-key ${signing.publicKey.toBase58()}`,
        "start the service with the signing key you register, or pass its key file as --signing-key",
      );
    }
    step(health.key === undefined ? `${endpoint}/health: ${health.problem}; the probe will tell` : `${endpoint} signs with the signing key`);

    let agent: PublicKey;
    let registerTransaction: string | null = null;
    if (existing) {
      const account = await fetchAgent(connection, existing, { programId });
      if (!account) throw new CliError(`no agent account ${existing.toBase58()} on ${network}`, "register it: run this command without --agent");
      if (!account.creator.equals(creator.publicKey)) {
        throw new CliError(`agent ${existing.toBase58()} was registered by ${account.creator.toBase58()}`, "pass that wallet's --keypair");
      }
      agent = existing;
      step(`Agent ${agent.toBase58()} is registered on-chain with ${formatUsdc(account.collateralUsdc)} USDC of collateral`);
    } else {
      const tokenAccount = getAssociatedTokenAddressSync(mint, creator.publicKey);
      const balance = await connection
        .getTokenAccountBalance(tokenAccount)
        .then((b) => BigInt(b.value.amount))
        .catch(() => 0n);
      if (balance < collateral) {
        throw new CliError(
          `the wallet holds ${formatUsdc(balance)} USDC; the collateral is ${formatUsdc(collateral)} USDC`,
          `send at least ${formatUsdc(collateral - balance)} USDC (mint ${served.usdc_mint}) to ${creator.publicKey.toBase58()}`,
        );
      }
      if ((await connection.getBalance(creator.publicKey)) === 0) {
        throw new CliError("the wallet has no SOL for the transaction fee and the accounts' rent", `fund ${creator.publicKey.toBase58()} with SOL`);
      }
      step(`The wallet holds ${formatUsdc(balance)} USDC, enough for ${formatUsdc(collateral)} USDC of collateral`);

      const newAgentId = agentId ?? new Uint8Array(randomBytes(16));
      agent = agentPda(newAgentId, programId);
      const signingKeyProof = givenProof ?? signSigningKeyProof(signing.secretKey!, agent, creator.publicKey);
      if (!verifySigningKeyProof(signingKeyProof, signing.publicKey.toBytes(), agent, creator.publicKey)) {
        throw new CliError(
          `--key-proof is not ${signing.publicKey.toBase58()}'s proof for agent ${agent.toBase58()} and creator ${creator.publicKey.toBase58()}`,
          `print it where the key is: agent-market key-proof --signing-key <file> --creator ${creator.publicKey.toBase58()} --agent ${agent.toBase58()}`,
        );
      }
      const instructions = registerAgentInstructions({
        programId,
        creator: creator.publicKey,
        agentId: newAgentId,
        creatorTokenAccount: tokenAccount,
        payoutAccount: tokenAccount,
        usdcMint: mint,
        terms: {
          signingKey: signing.publicKey.toBytes(),
          endpoint,
          listingHash: hash,
          pricing: pricing.chain,
          maxExecutionSecs,
        },
        collateralUsdc: collateral,
        signingKeyProof,
      });
      try {
        registerTransaction = await sendAndConfirmTransaction(connection, new Transaction().add(...withComputeBudget(instructions, programId)), [creator], {
          commitment: "confirmed",
        });
      } catch (error) {
        throw new CliError(`register_agent failed: ${sendFailure(error)}`, "nothing was registered; fix the cause and run register again");
      }
      step(`Registered agent ${agent.toBase58()}, ${formatUsdc(collateral)} USDC locked (transaction ${registerTransaction})`);
    }

    let listing: Agent;
    try {
      listing = await session.listings.create({
        network,
        agent: agent.toBase58(),
        ...doc,
        input_schema: doc.input_schema as Record<string, unknown>,
        output_schema: doc.output_schema as Record<string, unknown>,
        endpoint,
        signing_key: signing.publicKey.toBase58(),
        pricing: pricing.listing,
      });
    } catch (error) {
      if (!(error instanceof AgentMarketError)) throw error;
      const advice = adviceFor(error, { agent: agent.toBase58(), endpoint, marketplaceKey: served.request_signing_key });
      const retry =
        error.code === "agent_already_listed"
          ? ""
          : `; the agent stays registered on-chain with its collateral, so list it again with agent-market register … --agent ${agent.toBase58()}`;
      throw new CliError(`listing failed: ${error.message} (${error.code})`, `${advice ?? "fix the cause"}${retry}`);
    }
    step(`Listed: ${listing.id} is ${listing.status}${listing.last_probe ? ` (probe answered in ${listing.last_probe.latency_ms} ms)` : ""}`);
    if (io.json) {
      io.out(JSON.stringify({ agent: listing.id, register_transaction: registerTransaction, listing }, null, 2));
    } else {
      io.out(listing.id);
    }
  },
};
