// A market as the relayer reads it, held by the stand-in RPC under a program id of the test's own
// (never the IDL's, so a read that forgot the configured id finds nothing): the market account, an
// agent a creator registered with its listing's terms, and a payer's USDC account. The relayer
// under test is started against it; its creator is a real creator kit on 127.0.0.1.
import { createHash, randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

import { createAgentService } from "@agent-market/creator";
import { agentPda, delegatePda, ed25519PublicKey, formatAddress, listingHash, marketPda, receiptLogPda, type Agent, type Market } from "@agent-market/program";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";

import { StandInRpc } from "./stand-in-rpc.js";

export const MIN_COLLATERAL_USDC = 100_000_000n;
export const PRICE_USDC = 250_000n;
export const PRICE_WIRE = { model: "pay_per_use", price_usdc: "0.250000" } as const;

export const INPUT_SCHEMA = {
  type: "object",
  properties: { text: { type: "string", examples: ["hello"] } },
  required: ["text"],
  additionalProperties: false,
};
export const OUTPUT_SCHEMA = { type: "object", properties: { echo: { type: "string" } }, required: ["echo"] };

export const LISTING_DOC = {
  name: "Echo",
  description: "Echoes the text it is given: an agent of the relayer's own tests.",
  tags: ["text"],
  input_schema: INPUT_SCHEMA,
  output_schema: OUTPUT_SCHEMA,
};

export interface Creator {
  wallet: Keypair;
  agent: PublicKey;
  /** The creator kit serving the agent, as the relayer's probe and executions reach it. */
  endpoint: string;
  /** POST /execute requests the kit answered. */
  executions(): number;
  /** The agent's account as the program client decodes it: what a test changes to move the chain. */
  terms: Agent;
  close(): Promise<void>;
}

export class StandInMarket {
  readonly programId = Keypair.generate().publicKey;
  readonly usdcMint = Keypair.generate().publicKey;
  readonly arbiter = Keypair.generate();

  private constructor(readonly rpc: StandInRpc) {}

  static async start(): Promise<StandInMarket> {
    const market = new StandInMarket(await StandInRpc.start());
    await market.setMarket({});
    return market;
  }

  /** The relayer's environment for devnet served by this market. */
  env(): Record<string, string> {
    return { DEVNET_RPC_URL: this.rpc.url, DEVNET_PROGRAM_ID: this.programId.toBase58() };
  }

  async setMarket(change: Partial<Market>): Promise<void> {
    const someone = Keypair.generate().publicKey;
    await this.rpc.setProgramAccount(marketPda(this.programId), this.programId, "Market", {
      authority: someone,
      relayer: someone,
      arbiter: this.arbiter.publicKey,
      treasury: someone,
      usdcMint: this.usdcMint,
      minCollateralUsdc: MIN_COLLATERAL_USDC,
      minPricePerCallUsdc: 10_000n,
      escrowGraceSecs: 60,
      disputeWindowSecs: 3 * 24 * 3600,
      collateralCooldownSecs: 3600,
      escrowsPaused: false,
      bump: 255,
      delegateBump: 255,
      feeShardBumps: new Uint8Array(8).fill(255),
      pendingAuthority: PublicKey.default,
      ...change,
    });
  }

  /** A creator's agent on chain with the listing's terms, served by a creator kit that trusts `marketplaceKey`. */
  async register(marketplaceKey: Uint8Array): Promise<Creator> {
    const wallet = Keypair.generate();
    const seed = new Uint8Array(createHash("sha256").update(wallet.secretKey).digest());
    const agentId = new Uint8Array(randomBytes(16));
    const agent = agentPda(agentId, this.programId);
    let executions = 0;
    const kit = createAgentService({
      signingKey: seed,
      marketplaceKey: formatAddress(marketplaceKey),
      agents: [agent.toBase58()],
      inputSchema: INPUT_SCHEMA,
      outputSchema: OUTPUT_SCHEMA,
      handler: ({ parameters }: { parameters: { text: string } }) => {
        executions += 1;
        return { echo: parameters.text };
      },
    });
    const server: Server = await kit.listen(0, "127.0.0.1");
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const terms: Agent = {
      creator: wallet.publicKey,
      agentId,
      signingKey: ed25519PublicKey(seed),
      payoutAccount: getAssociatedTokenAddressSync(this.usdcMint, wallet.publicKey),
      endpoint,
      listingHash: listingHash(LISTING_DOC),
      pricing: { kind: "PayPerUse", priceUsdc: PRICE_USDC },
      maxExecutionSecs: 30,
      collateralUsdc: MIN_COLLATERAL_USDC,
      status: "Active",
      registeredAt: 1n,
      retiredAt: 0n,
      openDisputes: 0,
      bump: 255,
      collateralVaultBump: 255,
      escrowVaultBump: 255,
      subscriptionsExpireAt: 0n,
      escrowsOpened: 0n,
      lastEscrowDeadline: 0n,
    };
    await this.setAgent(agent, terms);
    // The receipt log registration pays for: the listing only looks that it exists.
    this.rpc.setRawProgramAccount(receiptLogPda(agent, this.programId), this.programId, Buffer.alloc(8));
    return {
      wallet,
      agent,
      endpoint,
      executions: () => executions,
      terms,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  }

  /** Writes the agent account (what update_agent, a top-up or retire_agent change on chain). */
  setAgent(agent: PublicKey, terms: Agent): Promise<void> {
    return this.rpc.setProgramAccount(agent, this.programId, "Agent", terms);
  }

  /** The wallet's USDC account holding `balance_usdc`, of which the program's delegate may move `allowance_usdc`. */
  fund(wallet: PublicKey, balance_usdc: bigint, allowance_usdc: bigint): PublicKey {
    const address = getAssociatedTokenAddressSync(this.usdcMint, wallet, true);
    this.rpc.setTokenAccount(address, {
      mint: this.usdcMint,
      owner: wallet,
      amount_usdc: balance_usdc,
      ...(allowance_usdc > 0n ? { delegate: delegatePda(this.programId), delegated_usdc: allowance_usdc } : {}),
    });
    return address;
  }

  close(): Promise<void> {
    return this.rpc.close();
  }
}
