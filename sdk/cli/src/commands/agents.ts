import { formatUsdc, NotFoundError, type WalletSession } from "@agent-market/client";
import {
  collateralVaultPda,
  fetchAgent,
  retireAgentInstruction,
  topUpCollateralInstruction,
  withdrawCollateralInstruction,
  type Agent,
} from "@agent-market/program";
import { getAccount, getAssociatedTokenAddressSync } from "@solana/spl-token";
import { PublicKey, type Connection, type Keypair } from "@solana/web3.js";

import { chainNow, connect, duration, market, signAndSend } from "../chain.js";
import { readConfig, type CliConfig } from "../config.js";
import { CliError, output, UsageError, type Command, type Io } from "../io.js";
import { keypairOption } from "../keyfile.js";
import { networkOption, parse, required, usdcOption } from "../options.js";
import { programIdOption } from "../program-id.js";
import { storedSession } from "../session.js";

const usage = `agent-market agents pause <agent> [--network devnet|mainnet] [--api <url>] [--json]
agent-market agents resume <agent> [--network devnet|mainnet] [--api <url>] [--json]
agent-market agents retire <agent> [--keypair <creator file>] [--rpc <url>] [--network …] [--api <url>]
                           [--program-id <address>] [--json]
agent-market agents withdraw <agent> [--keypair <creator file>] [--rpc <url>] [--program-id <address>]
                             [--json]
agent-market agents topup <agent> <usdc> [--keypair <creator file>] [--rpc <url>]
                          [--program-id <address>] [--json]

The creator's agents. pause, resume: the listing takes no executions while paused (the signed-in
wallet's session). retire: retire_agent on chain, signed by the creator's keypair (the one given
to login unless --keypair), which stops new escrows for good and starts the collateral cooldown;
then the listing is retired too. withdraw: the whole collateral back to the creator's USDC
account once the cooldown has passed and no dispute is open (it says how long is left). topup:
more USDC locked as collateral. The RPC is --rpc, $AGENT_MARKET_RPC_URL or the one login
remembered. --program-id: the program's address on that network (else $AGENT_MARKET_PROGRAM_ID,
else the IDL's).`;

function agentAddress(text: string | undefined): PublicKey {
  const value = required(text, "<agent>", usage);
  try {
    return new PublicKey(value);
  } catch {
    throw new UsageError(`${value} is not an address`, usage);
  }
}

/** The agent's account (the program's at `programId`), checked to belong to the creator who signs. */
async function ownAgent(connection: Connection, address: PublicKey, creator: Keypair, programId: PublicKey): Promise<Agent> {
  const agent = await fetchAgent(connection, address, { programId });
  if (!agent) throw new CliError(`no agent account at ${address.toBase58()}`, "check the address and --rpc");
  if (!agent.creator.equals(creator.publicKey)) {
    throw new CliError(`${address.toBase58()} was registered by ${agent.creator.toBase58()}, not ${creator.publicKey.toBase58()}`, "pass the creator's --keypair");
  }
  return agent;
}

async function listingTransition(io: Io, action: "pause" | "resume", args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { network: { type: "string" }, api: { type: "string" } }, usage, 1);
  const address = agentAddress(positionals[0]).toBase58();
  const network = networkOption(values.network, usage);
  const session = await storedSession(io, await readConfig(io), values.api);
  const listing = await session.listings[action](address, { network });
  output(io, listing, () => [`${address} on ${network} is ${listing.status}`]);
}

async function retire(io: Io, args: string[], config: CliConfig): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      keypair: { type: "string" },
      rpc: { type: "string" },
      network: { type: "string" },
      api: { type: "string" },
      "program-id": { type: "string" },
    },
    usage,
    1,
  );
  const address = agentAddress(positionals[0]);
  const network = networkOption(values.network, usage);
  const programId = programIdOption(io, values["program-id"], usage);
  const creator = await keypairOption(values.keypair, config.keypair);
  const connection = connect(io, values.rpc, config);
  const agent = await ownAgent(connection, address, creator, programId);
  const { collateralCooldownSecs } = await market(connection, programId);
  let signature: string | null = null;
  if (agent.status === "Active") {
    signature = await signAndSend(
      io,
      connection,
      creator,
      programId,
      [retireAgentInstruction({ programId, creator: creator.publicKey, agent: address })],
      [
        `retire_agent ${address.toBase58()}: no new escrows, for good; open ones can still settle or be refunded`,
        `the collateral (${formatUsdc(agent.collateralUsdc)} USDC) can be withdrawn ${duration(BigInt(collateralCooldownSecs))} from now`,
      ],
    );
  } else {
    io.err(`${address.toBase58()} is retired on chain already`);
  }
  let session: WalletSession | null = null;
  if (config.session) session = await storedSession(io, config, values.api);
  let listing: string = "not signed in: the listing was left as it is";
  if (session) {
    try {
      listing = (await session.listings.retire(address.toBase58(), { network })).status;
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      listing = "not listed";
    }
  }
  const retired = await fetchAgent(connection, address, { programId });
  const unlocks_at = new Date(Number(retired!.retiredAt + BigInt(collateralCooldownSecs)) * 1000).toISOString();
  output(io, { agent: address.toBase58(), on_chain: "Retired", listing, collateral_unlocks_at: unlocks_at, transaction: signature }, () => [
    `Retired ${address.toBase58()} (listing: ${listing}); its collateral unlocks at ${unlocks_at}${signature ? `, transaction ${signature}` : ""}`,
  ]);
}

async function withdraw(io: Io, args: string[], config: CliConfig): Promise<void> {
  const { values, positionals } = parse(
    args,
    { keypair: { type: "string" }, rpc: { type: "string" }, "program-id": { type: "string" } },
    usage,
    1,
  );
  const address = agentAddress(positionals[0]);
  const programId = programIdOption(io, values["program-id"], usage);
  const creator = await keypairOption(values.keypair, config.keypair);
  const connection = connect(io, values.rpc, config);
  const agent = await ownAgent(connection, address, creator, programId);
  const { collateralCooldownSecs, usdcMint } = await market(connection, programId);
  if (agent.status !== "Retired") {
    throw new CliError(`${address.toBase58()} is active: collateral is locked until it is retired and the cooldown has passed`, `agent-market agents retire ${address.toBase58()}`);
  }
  if (agent.openDisputes > 0) {
    throw new CliError(`${address.toBase58()} has ${agent.openDisputes} open dispute(s): the collateral stays until the arbiter resolves them`, `agent-market dispute list --role creator --state open`);
  }
  const unlocks_at = agent.retiredAt + BigInt(collateralCooldownSecs);
  const now = await chainNow(connection);
  if (now < unlocks_at) {
    throw new CliError(
      `the collateral cooldown has ${duration(unlocks_at - now)} left (it unlocks at ${new Date(Number(unlocks_at) * 1000).toISOString()})`,
      `run agent-market agents withdraw ${address.toBase58()} again after that`,
    );
  }
  const creatorTokenAccount = getAssociatedTokenAddressSync(usdcMint, creator.publicKey);
  const before = (await getAccount(connection, creatorTokenAccount)).amount;
  const signature = await signAndSend(
    io,
    connection,
    creator,
    programId,
    [withdrawCollateralInstruction({ programId, creator: creator.publicKey, agent: address, creatorTokenAccount, usdcMint })],
    [`withdraw_collateral ${address.toBase58()}: ${formatUsdc(agent.collateralUsdc)} USDC from its collateral vault to ${creatorTokenAccount.toBase58()}`],
  );
  const after = (await getAccount(connection, creatorTokenAccount)).amount;
  output(io, { agent: address.toBase58(), withdrawn_usdc: formatUsdc(after - before), transaction: signature }, () => [
    `Withdrew ${formatUsdc(after - before)} USDC of collateral from ${address.toBase58()}, transaction ${signature}`,
  ]);
}

async function topUp(io: Io, args: string[], config: CliConfig): Promise<void> {
  const { values, positionals } = parse(
    args,
    { keypair: { type: "string" }, rpc: { type: "string" }, "program-id": { type: "string" } },
    usage,
    2,
  );
  const address = agentAddress(positionals[0]);
  const amount = usdcOption(required(positionals[1], "<usdc>", usage), "<usdc>", usage);
  if (amount === 0n) throw new UsageError("<usdc> must be more than 0", usage);
  const programId = programIdOption(io, values["program-id"], usage);
  const creator = await keypairOption(values.keypair, config.keypair);
  const connection = connect(io, values.rpc, config);
  const agent = await ownAgent(connection, address, creator, programId);
  const { usdcMint } = await market(connection, programId);
  const creatorTokenAccount = getAssociatedTokenAddressSync(usdcMint, creator.publicKey);
  const signature = await signAndSend(
    io,
    connection,
    creator,
    programId,
    [topUpCollateralInstruction({ programId, creator: creator.publicKey, agent: address, creatorTokenAccount, usdcMint, amountUsdc: amount })],
    [`top_up_collateral ${address.toBase58()}: ${formatUsdc(amount)} USDC from ${creatorTokenAccount.toBase58()} to its collateral (now ${formatUsdc(agent.collateralUsdc)} USDC)`],
  );
  const vault = (await getAccount(connection, collateralVaultPda(address, programId))).amount;
  output(io, { agent: address.toBase58(), added_usdc: formatUsdc(amount), collateral_usdc: formatUsdc(vault), transaction: signature }, () => [
    `Added ${formatUsdc(amount)} USDC: ${address.toBase58()} holds ${formatUsdc(vault)} USDC of collateral, transaction ${signature}`,
  ]);
}

export const agents: Command = {
  name: "agents",
  summary: "pause, resume, retire an agent; withdraw or top up its collateral",
  usage,
  async run(args, io) {
    const [action, ...rest] = args;
    switch (action) {
      case "pause":
      case "resume":
        return listingTransition(io, action, rest);
      case "retire":
        return retire(io, rest, await readConfig(io));
      case "withdraw":
        return withdraw(io, rest, await readConfig(io));
      case "topup":
        return topUp(io, rest, await readConfig(io));
      default:
        throw new UsageError(
          action === undefined ? "agents needs pause, resume, retire, withdraw or topup" : `unknown agents command ${action}`,
          usage,
        );
    }
  },
};
