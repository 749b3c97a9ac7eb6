// Reads from the networks the relayer serves, through ordinary JSON-RPC: the market account, agent
// accounts, a wallet's USDC balance and delegate allowance; and the unsigned allowance
// transactions a wallet signs itself. An RPC that does not answer is a 503, never a guess.
import {
  delegatePda,
  fetchAgent,
  fetchMarket,
  marketPda,
  receiptLogPda,
  type Agent,
  type Market,
  USDC_DECIMALS,
  type NetworkName,
  withComputeBudget,
} from "@agent-market/program";
import {
  createApproveCheckedInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createRevokeInstruction,
  getAssociatedTokenAddressSync,
  unpackAccount,
} from "@solana/spl-token";
import { Connection, PublicKey, Transaction, type TransactionInstruction } from "@solana/web3.js";

import type { NetworkConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { RpcClient } from "./rpc-client.js";

export interface WalletFunding {
  network: NetworkName;
  wallet: PublicKey;
  usdc_mint: PublicKey;
  token_account: PublicKey;
  token_account_exists: boolean;
  balance_usdc: bigint;
  /** What the program's delegate PDA may move; 0 if the account delegates to anyone else. */
  allowance_usdc: bigint;
}

export interface UnsignedTransaction {
  network: NetworkName;
  /** Base64 of the serialized transaction, fee payer = the wallet, without signatures. */
  transaction: string;
  recent_blockhash: string;
  last_valid_block_height: number;
}

async function rpc<T>(network: NetworkName, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // web3.js's messages may carry the RPC's URL (and the key in it): the cause goes to the log only.
    throw new ApiError("chain_unavailable", `The ${network} RPC did not answer.`, undefined, undefined, error);
  }
}

/** How long a read of the market account serves: it changes only by the authority's update_market. */
const MARKET_MAX_AGE_MS = 5_000;

export class ChainService {
  private readonly connections = new Map<NetworkName, Connection>();
  private readonly programIds = new Map<NetworkName, PublicKey>();
  private readonly rpcs = new Map<NetworkName, RpcClient>();
  private readonly markets = new Map<NetworkName, { market: Promise<Market>; at_ms: number }>();

  constructor(networks: Partial<Record<NetworkName, NetworkConfig>>) {
    for (const network of Object.values(networks)) {
      this.connections.set(
        network.name,
        new Connection(network.rpc_url, { commitment: "confirmed", wsEndpoint: network.websocket_url }),
      );
      this.rpcs.set(network.name, new RpcClient(network.rpc_url));
      this.programIds.set(network.name, network.program_id);
    }
  }

  get networks(): NetworkName[] {
    return [...this.connections.keys()];
  }

  /** The lean client of the calls on an execution's path (see rpc-client.ts). */
  rpc(network: NetworkName): RpcClient {
    const rpc = this.rpcs.get(network);
    if (!rpc) {
      throw new ApiError("network_not_configured", `This relayer does not serve ${network}.`, undefined, { network });
    }
    return rpc;
  }

  /** The program's address on `network`, which every derivation and instruction for it uses. */
  programId(network: NetworkName): PublicKey {
    const programId = this.programIds.get(network);
    if (!programId) {
      throw new ApiError("network_not_configured", `This relayer does not serve ${network}.`, undefined, { network });
    }
    return programId;
  }

  /** Drops the RPC clients' idle keep-alive sockets. */
  close(): void {
    for (const rpc of this.rpcs.values()) rpc.close();
  }

  connection(network: NetworkName): Connection {
    const connection = this.connections.get(network);
    if (!connection) {
      throw new ApiError("network_not_configured", `This relayer does not serve ${network}.`, undefined, { network });
    }
    return connection;
  }

  /**
   * The market account, read at most every few seconds: it is on every execution's path, and the
   * program checks the same account in each transaction, so a stale read can only make one fail.
   * A check the program does not repeat asks for a fresher read with `max_age_ms`.
   */
  market(network: NetworkName, max_age_ms = MARKET_MAX_AGE_MS): Promise<Market> {
    const connection = this.connection(network);
    const cached = this.markets.get(network);
    if (cached && Date.now() - cached.at_ms < max_age_ms) return cached.market;
    const programId = this.programId(network);
    const market = rpc(network, () => fetchMarket(connection, marketPda(programId), { programId })).then((found) => {
      if (!found) throw new ApiError("chain_unavailable", `The agent_market program has no market on ${network}.`);
      return found;
    });
    this.markets.set(network, { market, at_ms: Date.now() });
    market.catch(() => this.markets.delete(network));
    return market;
  }

  async agent(network: NetworkName, address: PublicKey): Promise<Agent | null> {
    const connection = this.connection(network);
    return rpc(network, () => fetchAgent(connection, address, { programId: this.programId(network) }));
  }

  /** Whether the agent's receipt log exists: its creator pays it at registration. */
  async hasReceiptLog(network: NetworkName, agent: PublicKey): Promise<boolean> {
    const connection = this.connection(network);
    const address = receiptLogPda(agent, this.programId(network));
    return (await rpc(network, () => connection.getAccountInfo(address, "confirmed"))) !== null;
  }

  async walletFunding(network: NetworkName, wallet: PublicKey): Promise<WalletFunding> {
    const market = await this.market(network);
    const connection = this.connection(network);
    const token_account = getAssociatedTokenAddressSync(market.usdcMint, wallet, true);
    const info = await rpc(network, () => connection.getAccountInfo(token_account));
    const funding: WalletFunding = {
      network,
      wallet,
      usdc_mint: market.usdcMint,
      token_account,
      token_account_exists: info !== null,
      balance_usdc: 0n,
      allowance_usdc: 0n,
    };
    if (info) {
      const account = unpackAccount(token_account, info, info.owner);
      funding.balance_usdc = account.amount;
      funding.allowance_usdc = account.delegate?.equals(delegatePda(this.programId(network))) ? account.delegatedAmount : 0n;
    }
    return funding;
  }

  /** approveChecked of `amount_usdc` to the program's delegate, creating the USDC account if needed. */
  async approveTransaction(network: NetworkName, wallet: PublicKey, amount_usdc: bigint): Promise<UnsignedTransaction> {
    const funding = await this.walletFunding(network, wallet);
    const instructions: TransactionInstruction[] = [];
    if (!funding.token_account_exists) {
      instructions.push(
        createAssociatedTokenAccountIdempotentInstruction(wallet, funding.token_account, wallet, funding.usdc_mint),
      );
    }
    instructions.push(
      createApproveCheckedInstruction(
        funding.token_account,
        funding.usdc_mint,
        delegatePda(this.programId(network)),
        wallet,
        amount_usdc,
        USDC_DECIMALS,
      ),
    );
    return this.unsigned(network, wallet, instructions);
  }

  async revokeTransaction(network: NetworkName, wallet: PublicKey): Promise<UnsignedTransaction> {
    const funding = await this.walletFunding(network, wallet);
    return this.unsigned(network, wallet, [createRevokeInstruction(funding.token_account, wallet)]);
  }

  private async unsigned(
    network: NetworkName,
    wallet: PublicKey,
    instructions: TransactionInstruction[],
  ): Promise<UnsignedTransaction> {
    const connection = this.connection(network);
    const { blockhash, lastValidBlockHeight } = await rpc(network, () => connection.getLatestBlockhash("confirmed"));
    // The units it needs; the unit price is the wallet's to set, as wallets do for what they sign.
    const budgeted = withComputeBudget(instructions, this.programId(network));
    const transaction = new Transaction({ feePayer: wallet, blockhash, lastValidBlockHeight }).add(...budgeted);
    return {
      network,
      transaction: transaction.serialize({ requireAllSignatures: false, verifySignatures: false }).toString("base64"),
      recent_blockhash: blockhash,
      last_valid_block_height: lastValidBlockHeight,
    };
  }
}

