import { formatUsdc, parseUsdc, type WalletFunding } from "@agent-market/client";
import { delegatePda } from "@agent-market/program";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  decodeApproveCheckedInstruction,
  decodeRevokeInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import { ComputeBudgetProgram, Connection, PublicKey, Transaction, type TransactionInstruction } from "@solana/web3.js";

import { readConfig, rpcUrl, type CliConfig } from "../config.js";
import { CliError, output, UsageError, type Command, type Io } from "../io.js";
import { readKeypair } from "../keyfile.js";
import { networkOption, parse, required, usdcOption } from "../options.js";
import { programIdOption } from "../program-id.js";
import { storedSession } from "../session.js";

const usage = `agent-market allowance set <usdc> [--rpc <url>] [--keypair <wallet file>] [--network devnet|mainnet]
                              [--program-id <address>] [--json]
agent-market allowance revoke [--rpc <url>] [--keypair <wallet file>] [--network devnet|mainnet]
                              [--program-id <address>] [--json]

set: how much USDC the marketplace program may draw from the signed-in wallet for executions
(an SPL Token approval to the program's delegate; it replaces the current one). revoke: none at
all, until the next set. The API builds the transaction; this command checks it does only that,
signs it with the wallet's keypair (the one given to login unless --keypair), sends it to the RPC
(--rpc, $AGENT_MARKET_RPC_URL or the one login remembered) and waits for its confirmation.
--program-id: the program's address on that network, whose delegate the approval must name (else
$AGENT_MARKET_PROGRAM_ID, else the IDL's).`;

/**
 * The transaction's instructions but its compute unit limit, refused if it holds anything else
 * of the compute budget program: a unit price would make the wallet pay a priority fee the
 * marketplace chose (the relayer sets none on what a wallet signs).
 */
function withoutUnitLimit(tx: Transaction, refuse: (why: string) => never): TransactionInstruction[] {
  const rest = tx.instructions.filter((ix) => !ix.programId.equals(ComputeBudgetProgram.programId));
  const budget = tx.instructions.filter((ix) => ix.programId.equals(ComputeBudgetProgram.programId));
  // SetComputeUnitLimit is instruction 2 of the compute budget program: a u32 of units.
  if (budget.length > 1 || budget.some((ix) => ix.data[0] !== 2 || ix.data.length !== 5)) refuse("it sets more of the compute budget than a unit limit");
  return rest;
}

/**
 * Refuses to sign anything but what was asked: an approveChecked of exactly `amount` from the
 * wallet's USDC account to the program's delegate, optionally preceded by the creation of that
 * account and by a compute unit limit, all paid by the wallet. The delegate is that of the program
 * at `programId`.
 */
export function checkAllowanceTransaction(
  tx: Transaction,
  wallet: PublicKey,
  funding: WalletFunding,
  amount: bigint,
  programId: PublicKey,
): void {
  const refuse = (why: string): never => {
    throw new CliError(`refusing to sign the API's transaction: ${why}`, "report it to the marketplace; nothing was signed");
  };
  if (!tx.feePayer?.equals(wallet)) refuse("another account pays its fee");
  const tokenAccount = getAssociatedTokenAddressSync(new PublicKey(funding.usdc_mint), wallet, true);
  let approvals = 0;
  for (const ix of withoutUnitLimit(tx, refuse)) {
    if (ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)) {
      const [payer, account, owner] = ix.keys.map((k) => k.pubkey);
      if (!payer?.equals(wallet) || !owner?.equals(wallet) || !account?.equals(tokenAccount)) refuse("it creates a token account for someone else");
      continue;
    }
    if (!ix.programId.equals(TOKEN_PROGRAM_ID)) refuse(`it calls ${ix.programId.toBase58()}`);
    let decoded;
    try {
      decoded = decodeApproveCheckedInstruction(ix, TOKEN_PROGRAM_ID);
    } catch {
      return refuse("it holds a token instruction other than approveChecked");
    }
    const { keys, data } = decoded;
    if (!keys.account.pubkey.equals(tokenAccount)) refuse("it approves from another token account");
    if (!keys.delegate.pubkey.equals(delegatePda(programId))) refuse(`it approves ${keys.delegate.pubkey.toBase58()}, not the program's delegate`);
    if (!keys.owner.pubkey.equals(wallet)) refuse("another owner signs the approval");
    if (data.amount !== amount) refuse(`it approves ${formatUsdc(data.amount)} USDC, not ${formatUsdc(amount)}`);
    approvals += 1;
  }
  if (approvals !== 1) refuse(`it holds ${approvals} approvals`);
}

/**
 * Refuses to sign anything but one SPL Token revoke on the wallet's own USDC account, after a
 * compute unit limit, paid by it.
 */
export function checkRevokeTransaction(tx: Transaction, wallet: PublicKey, funding: WalletFunding): void {
  const refuse = (why: string): never => {
    throw new CliError(`refusing to sign the API's transaction: ${why}`, "report it to the marketplace; nothing was signed");
  };
  if (!tx.feePayer?.equals(wallet)) refuse("another account pays its fee");
  const instructions = withoutUnitLimit(tx, refuse);
  if (instructions.length !== 1) refuse(`it holds ${instructions.length} instructions, not one revoke`);
  const ix = instructions[0]!;
  if (!ix.programId.equals(TOKEN_PROGRAM_ID)) refuse(`it calls ${ix.programId.toBase58()}`);
  let decoded;
  try {
    decoded = decodeRevokeInstruction(ix, TOKEN_PROGRAM_ID);
  } catch {
    return refuse("it holds a token instruction other than revoke");
  }
  const tokenAccount = getAssociatedTokenAddressSync(new PublicKey(funding.usdc_mint), wallet, true);
  if (!decoded.keys.account.pubkey.equals(tokenAccount)) refuse("it revokes on another token account");
  if (!decoded.keys.owner.pubkey.equals(wallet)) refuse("another owner signs the revoke");
}

/** The wallet's keypair, checked to be the signed-in one, and the session. */
async function walletAndSession(io: Io, config: CliConfig, values: { keypair?: string; api?: string }) {
  const keypairPath = values.keypair ?? config.keypair;
  if (keypairPath === undefined) throw new CliError("no wallet keypair", "pass --keypair <wallet file>");
  const keypair = await readKeypair(keypairPath);
  const session = await storedSession(io, config, values.api);
  if (session.address !== keypair.publicKey.toBase58()) {
    throw new CliError(`${keypairPath} is ${keypair.publicKey.toBase58()}, but the session is ${session.address}`, "pass the signed-in wallet's --keypair, or login with this one");
  }
  return { keypair, session };
}

async function sendSigned(connection: Connection, tx: Transaction, unsigned: { recent_blockhash: string; last_valid_block_height: number }): Promise<string> {
  const signature = await connection.sendRawTransaction(tx.serialize());
  const confirmation = await connection.confirmTransaction(
    { signature, blockhash: unsigned.recent_blockhash, lastValidBlockHeight: unsigned.last_valid_block_height },
    "confirmed",
  );
  if (confirmation.value.err) throw new CliError(`the transaction failed on-chain: ${JSON.stringify(confirmation.value.err)} (${signature})`);
  return signature;
}

export const allowance: Command = {
  name: "allowance",
  summary: "set the wallet's USDC allowance for executions",
  usage,
  async run(args, io) {
    const [action, ...rest] = args;
    if (action !== "set" && action !== "revoke") {
      throw new UsageError(action === undefined ? "allowance needs set or revoke" : `unknown allowance command ${action}`, usage);
    }
    const { values, positionals } = parse(
      rest,
      { rpc: { type: "string" }, keypair: { type: "string" }, network: { type: "string" }, api: { type: "string" }, "program-id": { type: "string" } },
      usage,
      action === "set" ? 1 : 0,
    );
    const amount = action === "set" ? usdcOption(required(positionals[0], "<usdc>", usage), "<usdc>", usage) : 0n;
    const network = networkOption(values.network, usage);
    const programId = programIdOption(io, values["program-id"], usage);
    const config = await readConfig(io);
    const connection = new Connection(rpcUrl(io, values.rpc, config), "confirmed");
    const { keypair, session } = await walletAndSession(io, config, values);

    const before = await session.wallet.funding(network);
    const unsigned =
      action === "set"
        ? await session.wallet.allowanceTransaction({ network, amount_usdc: formatUsdc(amount) })
        : await session.wallet.revokeTransaction({ network });
    const tx = Transaction.from(Buffer.from(unsigned.transaction, "base64"));
    if (action === "set") {
      checkAllowanceTransaction(tx, keypair.publicKey, before, amount, programId);
      io.err(`Signing as ${keypair.publicKey.toBase58()}: approve ${formatUsdc(amount)} USDC to the program's delegate ${before.delegate} (was ${before.allowance_usdc})…`);
    } else {
      checkRevokeTransaction(tx, keypair.publicKey, before);
      io.err(`Signing as ${keypair.publicKey.toBase58()}: revoke the allowance of ${before.allowance_usdc} USDC given to ${before.delegate}…`);
    }
    tx.partialSign(keypair);
    const signature = await sendSigned(connection, tx, unsigned);
    const after = await session.wallet.funding(network);
    output(io, { network, allowance_usdc: after.allowance_usdc, balance_usdc: after.balance_usdc, transaction: signature }, () => [
      `Allowance ${after.allowance_usdc} USDC on ${network} (balance ${after.balance_usdc} USDC), transaction ${signature}`,
    ]);
    if (action === "set" && parseUsdc(after.balance_usdc) < amount) {
      io.err(`The wallet holds less than the allowance: fund ${after.token_account} (mint ${after.usdc_mint}) to use it all.`);
    }
  },
};
