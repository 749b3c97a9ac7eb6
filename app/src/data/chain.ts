// The chain as this page reads it and writes to it itself: the program's accounts decoded with
// @agent-market/program, and transactions the page builds from the program's instruction builders
// for the wallet to sign. Both need the chain's RPC: on localnet relayed by the relayer
// (config.rpc_path), on a hosted network the address its operator publishes (config.rpc_urls).
// Loaded on demand: the decoders are heavy.
import { AgentMarket } from "@agent-market/client";
import type { Market } from "@agent-market/program";
import type { NetworkName } from "@agent-market/program/network";
import type { Connection, PublicKey, TransactionInstruction } from "@solana/web3.js";

import type { ConnectedWallet } from "../wallet/wallet.js";
import { ChainError } from "./chain-errors.js";
import { chainRpcUrl, type DashboardConfig } from "./config.js";
import { requireFeeSol } from "./fees.js";

export type ProgramLib = typeof import("@agent-market/program");
export type Web3Lib = typeof import("@solana/web3.js");

export interface Chain {
  program: ProgramLib;
  web3: Web3Lib;
  connection: Connection;
  rpcUrl: string;
  network: NetworkName;
  programId: PublicKey;
  market: Market;
  /** A local chain, whose faucet the relayer offers. */
  localnet: boolean;
  /** The indexer's GraphQL: the receipt log proofs of executions settled by settle_batch. */
  graphqlUrl: string | null;
}

let loaded: Promise<Chain> | null = null;

async function load(config: DashboardConfig, network: NetworkName): Promise<Chain> {
  const rpcUrl = chainRpcUrl(config, network);
  if (rpcUrl === null) {
    throw new Error(
      `This marketplace gives its dashboard no RPC address for ${network} (its operator sets DASHBOARD_${network.toUpperCase()}_RPC_URL): use the agent-market CLI to sign this transaction.`,
    );
  }
  await import("./buffer-shim.js");
  const [program, web3] = await Promise.all([import("@agent-market/program"), import("@solana/web3.js")]);
  const described = await new AgentMarket({ baseUrl: location.origin }).marketplace();
  const entry = described.networks.find((n) => n.name === network);
  if (entry === undefined) throw new Error(`The relayer does not serve ${network}.`);
  const programId = new web3.PublicKey(entry.program_id);
  const connection = new web3.Connection(rpcUrl, "confirmed");
  const market = await program.fetchMarket(connection, undefined, { programId });
  if (market === null) throw new Error(`The market of program ${entry.program_id} is not initialised on ${network}.`);
  return { program, web3, connection, rpcUrl, network, programId, market, localnet: config.localnet, graphqlUrl: config.indexer_graphql_url };
}

/** The chain, its program and its market, read once per page. */
export function openChain(config: DashboardConfig, network: NetworkName): Promise<Chain> {
  loaded ??= load(config, network).catch((error: unknown) => {
    loaded = null;
    throw error;
  });
  return loaded;
}

/** The market as it is now (dispute window, arbiter, cooldown), not as it was when first read. */
export async function freshMarket(chain: Chain): Promise<Market> {
  const market = await chain.program.fetchMarket(chain.connection, undefined, { programId: chain.programId });
  if (market === null) throw new Error("The market account is gone.");
  return market;
}

/** The chain's own clock (unix seconds): localnet's can run ahead of this computer's. */
export async function chainNowSecs(chain: Chain): Promise<number> {
  const clock = await chain.connection.getAccountInfo(chain.web3.SYSVAR_CLOCK_PUBKEY, "confirmed");
  if (clock === null) throw new Error("The chain has no clock sysvar.");
  // Clock: slot, epoch_start_timestamp, epoch, leader_schedule_epoch, then unix_timestamp (i64).
  return Number(new DataView(clock.data.buffer, clock.data.byteOffset).getBigInt64(32, true));
}

/** Signs `instructions` with the wallet (the fee payer) and waits until they are confirmed. */
export async function signAndSendInstructions(chain: Chain, wallet: ConnectedWallet, instructions: TransactionInstruction[]): Promise<string> {
  await requireFeeSol(chain.rpcUrl, wallet.address, chain.localnet);
  const { blockhash, lastValidBlockHeight } = await chain.connection.getLatestBlockhash("confirmed");
  // The units they need; the unit price is the wallet's to set, as wallets do for what they sign.
  const budgeted = chain.program.withComputeBudget(instructions, chain.programId);
  const transaction = new chain.web3.Transaction({ feePayer: new chain.web3.PublicKey(wallet.address), blockhash, lastValidBlockHeight }).add(...budgeted);
  const unsigned = transaction.serialize({ requireAllSignatures: false, verifySignatures: false });
  try {
    return await wallet.signAndSend(Uint8Array.from(unsigned), chain.network, chain.rpcUrl);
  } catch (error) {
    // The RPC reports a program's refusal as a custom error number: name it as the program does.
    const text = error instanceof ChainError ? error.raw : error instanceof Error ? error.message : String(error);
    const hex = /custom program error: 0x([0-9a-f]+)/i.exec(text)?.[1];
    const decimal = /"Custom":(\d+)/.exec(text)?.[1];
    const code = hex !== undefined ? parseInt(hex, 16) : decimal !== undefined ? Number(decimal) : undefined;
    const known = code === undefined ? null : chain.program.errorFromCode(code);
    if (known !== null) throw new Error(`The program refused: ${known.msg} (${known.name}).`);
    throw error;
  }
}

const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";

/** The wallet's associated USDC account: where collateral comes from and goes back to. */
export function usdcAccountOf(chain: Chain, owner: string): PublicKey {
  const { PublicKey } = chain.web3;
  return PublicKey.findProgramAddressSync(
    [new PublicKey(owner).toBytes(), new PublicKey(TOKEN_PROGRAM).toBytes(), chain.market.usdcMint.toBytes()],
    new PublicKey(ASSOCIATED_TOKEN_PROGRAM),
  )[0];
}

/** The USDC an SPL token account holds (0 when it does not exist). */
export async function tokenBalance(chain: Chain, account: PublicKey): Promise<bigint> {
  const info = await chain.connection.getTokenAccountBalance(account, "confirmed").catch(() => null);
  return info === null ? 0n : BigInt(info.value.amount);
}
