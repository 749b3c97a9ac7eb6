// What the local marketplace sets up once its processes run: the creator and the test wallet
// funded, the example agents serving, registered on-chain with collateral and listed, and the
// test wallet's `svc_test_` key with its allowance. Each step is idempotent and its results are
// kept in the data folder's state, so a restart finds the same agents and key.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import {
  agentPda,
  ed25519Sign,
  listingHash,
  parseSigningKeyProof,
  parseWireUsdc,
  registerAgentInstructions,
  withComputeBudget,
  type ListingDocument,
  type Pricing,
} from "@agent-market/program";
import { exampleAgents, type ExamplePricing, type RunningAgent } from "@agent-market/examples";
import { utils } from "@coral-xyz/anchor";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction, sendAndConfirmTransaction } from "@solana/web3.js";

const USDC = 1_000_000n;

/** What the data folder's state.json keeps between starts. */
export interface State {
  api_key?: string;
  api_key_hash_secret: string;
  /** The embedded PostgreSQL's password (set by the first start that creates its cluster). */
  database_password?: string;
  agent_ids: Record<string, string>;
  funded?: boolean;
}

export interface DemoAgent {
  slug: string;
  address: string;
  url: string;
  listing: ListingDocument;
  pricing: ExamplePricing;
}

/** The agent account's Pricing for a listing's: the chain holds the prices, the listing a metered unit's name too. */
function chainPricing(pricing: ExamplePricing): Pricing {
  switch (pricing.model) {
    case "pay_per_use":
      return { kind: "PayPerUse", priceUsdc: parseWireUsdc(pricing.price_usdc) };
    case "metered":
      return {
        kind: "Metered",
        pricePerUnitUsdc: parseWireUsdc(pricing.price_per_unit_usdc),
        maxUnitsPerCall: BigInt(pricing.max_units_per_call),
      };
  }
}

export function keypairAt(path: string): Keypair {
  if (existsSync(path)) return Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(path, "utf8")) as number[]));
  const keypair = Keypair.generate();
  writeFileSync(path, JSON.stringify([...keypair.secretKey]), { mode: 0o600 });
  return keypair;
}

/** One JSON-RPC call to localnet (its `localnet_` development methods included). */
export async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

async function api<T>(base: string, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function signIn(base: string, wallet: Keypair): Promise<string> {
  const challenge = await api<{ message: string }>(base, "POST", "/v1/auth/nonce", { wallet: wallet.publicKey.toBase58() });
  const signature = utils.bytes.bs58.encode(ed25519Sign(wallet.secretKey, new TextEncoder().encode(challenge.body.message)));
  const session = await api<{ token: string }>(base, "POST", "/v1/auth/session", { message: challenge.body.message, signature });
  if (session.status !== 201) throw new Error(`sign-in failed: ${JSON.stringify(session.body)}`);
  return session.body.token;
}

async function airdrop(connection: Connection, to: PublicKey, sol: number): Promise<void> {
  const latest = await connection.getLatestBlockhash();
  const signature = await connection.requestAirdrop(to, sol * LAMPORTS_PER_SOL);
  await connection.confirmTransaction({ signature, ...latest }, "confirmed");
}

export interface DemoOptions {
  data_dir: string;
  state: State;
  save(): void;
  rpc_url: string;
  relayer_url: string;
  connection: Connection;
  marketplace_key: Keypair;
  agent_port: number;
  /** The agents' servers are pushed here as they start, for the caller to close them. */
  running: Pick<RunningAgent, "close">[];
  log(line: string): void;
}

export async function setUpDemo(options: DemoOptions): Promise<{ agents: DemoAgent[]; wallet: Keypair; api_key: string }> {
  const { data_dir, state, save, rpc_url, relayer_url, connection, log } = options;
  const creator = keypairAt(join(data_dir, "creator.json"));
  const wallet = keypairAt(join(data_dir, "wallet.json"));
  const slugs = Object.keys(exampleAgents) as (keyof typeof exampleAgents)[];
  if (!state.funded) {
    log("funding the creator (SOL for fees) and the test wallet (SOL, test USDC)");
    await airdrop(connection, creator.publicKey, 10);
    await airdrop(connection, wallet.publicKey, 10);
    await rpc(rpc_url, "localnet_mintUsdc", [wallet.publicKey.toBase58(), Number(100n * USDC)]);
    state.funded = true;
    save();
  }

  const market = await api<{ networks: { program_id: string; usdc_mint: string; minimum_collateral_usdc: string }[] }>(relayer_url, "GET", "/v1/marketplace");
  const programId = new PublicKey(market.body.networks[0]!.program_id);
  const usdcMint = new PublicKey(market.body.networks[0]!.usdc_mint);
  const creatorToken = getAssociatedTokenAddressSync(usdcMint, creator.publicKey);
  const creatorSession = await signIn(relayer_url, creator);
  const agents: DemoAgent[] = [];
  for (const [i, slug] of slugs.entries()) {
    const example = exampleAgents[slug];
    const signing = keypairAt(join(data_dir, `agent-${slug}.json`));
    state.agent_ids[slug] ??= utils.bytes.bs58.encode(randomBytes(16));
    save();
    const agentId = utils.bytes.bs58.decode(state.agent_ids[slug]!);
    const address = agentPda(agentId, programId);
    // The service answers for this agent alone: a copy of its listing under another address gets nothing.
    const agent = await example.start({
      signingKey: signing.secretKey,
      marketplaceKey: options.marketplace_key.publicKey.toBase58(),
      agents: [address.toBase58()],
      port: options.agent_port + i,
    });
    options.running.push(agent);
    if (!(await connection.getAccountInfo(address))) {
      log(`registering the ${slug} agent on-chain with 100 USDC of collateral`);
      // Minted for each agent as it registers, so an example added since the data folder was made registers too.
      await rpc(rpc_url, "localnet_mintUsdc", [creator.publicKey.toBase58(), Number(100n * USDC)]);
      const transaction = new Transaction().add(
        ...withComputeBudget(registerAgentInstructions({
          programId,
          creator: creator.publicKey,
          agentId,
          creatorTokenAccount: creatorToken,
          payoutAccount: creatorToken,
          usdcMint,
          terms: {
            signingKey: signing.publicKey.toBytes(),
            endpoint: agent.url,
            listingHash: listingHash(example.listing),
            pricing: chainPricing(example.pricing),
            maxExecutionSecs: 30,
          },
          collateralUsdc: 100n * USDC,
          signingKeyProof: parseSigningKeyProof(agent.keyProof(address.toBase58(), creator.publicKey.toBase58()))!,
        }), programId),
      );
      await sendAndConfirmTransaction(connection, transaction, [creator]);
    }
    const listed = await api(relayer_url, "GET", `/v1/agents/${address.toBase58()}`);
    if (listed.status === 404) {
      log(`listing the ${slug} agent (conformance probe against ${agent.url})`);
      const created = await api(
        relayer_url,
        "POST",
        "/v1/agents",
        {
          agent: address.toBase58(),
          ...example.listing,
          endpoint: agent.url,
          signing_key: signing.publicKey.toBase58(),
          pricing: example.pricing,
        },
        creatorSession,
      );
      if (created.status !== 201) throw new Error(`listing ${slug} failed: ${JSON.stringify(created.body)}`);
    }
    agents.push({ slug, address: address.toBase58(), url: agent.url, listing: example.listing, pricing: example.pricing });
  }

  const walletSession = await signIn(relayer_url, wallet);
  if (!state.api_key) {
    log("creating the test wallet's svc_test_ key and its 50 USDC allowance");
    const key = await api<{ secret: string }>(relayer_url, "POST", "/v1/keys", { name: "local demo", environment: "test" }, walletSession);
    state.api_key = key.body.secret;
    save();
    const allowance = await api<{ transaction: string }>(
      relayer_url,
      "POST",
      "/v1/wallet/allowance",
      { network: "devnet", amount_usdc: "50.000000" },
      walletSession,
    );
    const transaction = Transaction.from(Buffer.from(allowance.body.transaction, "base64"));
    transaction.partialSign(wallet);
    const signature = await connection.sendRawTransaction(transaction.serialize());
    const latest = await connection.getLatestBlockhash();
    await connection.confirmTransaction({ signature, ...latest }, "confirmed");
  }
  return { agents, wallet, api_key: state.api_key };
}
