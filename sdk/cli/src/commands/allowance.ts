import { formatUsdc, parseUsdc, type WalletFunding } from "@agent-market/client";
import { delegatePda } from "@agent-market/program";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  decodeApproveCheckedInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import { Connection, PublicKey, Transaction } from "@solana/web3.js";

import { readConfig, rpcUrl } from "../config.js";
import { CliError, UsageError, type Command } from "../io.js";
import { readKeypair } from "../keyfile.js";
import { networkOption, parse, required, usdcOption } from "../options.js";
import { storedSession } from "../session.js";

const usage = `agent-market allowance set <usdc> [--rpc <url>] [--keypair <wallet file>] [--network devnet|mainnet]

Sets how much USDC the marketplace program may draw from the signed-in wallet for executions
(an SPL Token approval to the program's delegate; it replaces the current one). The API builds
the transaction; this command checks it does only that, signs it with the wallet's keypair (the
one given to login unless --keypair), sends it to the RPC and waits for its confirmation.`;

/**
 * Refuses to sign anything but what was asked: an approveChecked of exactly `amount` from the
 * wallet's USDC account to the program's delegate, optionally preceded by the creation of that
 * account, all paid by the wallet.
 */
export function checkAllowanceTransaction(tx: Transaction, wallet: PublicKey, funding: WalletFunding, amount: bigint): void {
  const refuse = (why: string) => {
    throw new CliError(`refusing to sign the API's transaction: ${why}`, "report it to the marketplace; nothing was signed");
  };
  if (!tx.feePayer?.equals(wallet)) refuse("another account pays its fee");
  const tokenAccount = getAssociatedTokenAddressSync(new PublicKey(funding.usdc_mint), wallet, true);
  let approvals = 0;
  for (const ix of tx.instructions) {
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
    if (!keys.delegate.pubkey.equals(delegatePda())) refuse(`it approves ${keys.delegate.pubkey.toBase58()}, not the program's delegate`);
    if (!keys.owner.pubkey.equals(wallet)) refuse("another owner signs the approval");
    if (data.amount !== amount) refuse(`it approves ${formatUsdc(data.amount)} USDC, not ${formatUsdc(amount)}`);
    approvals += 1;
  }
  if (approvals !== 1) refuse(`it holds ${approvals} approvals`);
}

export const allowance: Command = {
  name: "allowance",
  summary: "set the wallet's USDC allowance for executions",
  usage,
  async run(args, io) {
    const [action, ...rest] = args;
    if (action !== "set") throw new UsageError(action === undefined ? "allowance needs set" : `unknown allowance command ${action}`, usage);
    const { values, positionals } = parse(
      rest,
      { rpc: { type: "string" }, keypair: { type: "string" }, network: { type: "string" }, api: { type: "string" } },
      usage,
      1,
    );
    const amount = usdcOption(required(positionals[0], "<usdc>", usage), "<usdc>", usage);
    const network = networkOption(values.network, usage);
    const config = await readConfig(io);
    const connection = new Connection(rpcUrl(values.rpc, config), "confirmed");
    const keypairPath = values.keypair ?? config.keypair;
    if (keypairPath === undefined) throw new CliError("no wallet keypair", "pass --keypair <wallet file>");
    const keypair = await readKeypair(keypairPath);
    const session = await storedSession(io, config, values.api);
    if (session.address !== keypair.publicKey.toBase58()) {
      throw new CliError(`${keypairPath} is ${keypair.publicKey.toBase58()}, but the session is ${session.address}`, "pass the signed-in wallet's --keypair, or login with this one");
    }

    const before = await session.wallet.funding(network);
    const unsigned = await session.wallet.allowanceTransaction({ network, amount_usdc: formatUsdc(amount) });
    const tx = Transaction.from(Buffer.from(unsigned.transaction, "base64"));
    checkAllowanceTransaction(tx, keypair.publicKey, before, amount);
    tx.partialSign(keypair);
    io.err(`Approving ${formatUsdc(amount)} USDC to the program's delegate ${before.delegate} (was ${before.allowance_usdc})…`);
    const signature = await connection.sendRawTransaction(tx.serialize());
    const confirmation = await connection.confirmTransaction(
      { signature, blockhash: unsigned.recent_blockhash, lastValidBlockHeight: unsigned.last_valid_block_height },
      "confirmed",
    );
    if (confirmation.value.err) throw new CliError(`the approval failed on-chain: ${JSON.stringify(confirmation.value.err)} (${signature})`);
    const after = await session.wallet.funding(network);
    io.out(`Allowance ${after.allowance_usdc} USDC on ${network} (balance ${after.balance_usdc} USDC), transaction ${signature}`);
    if (parseUsdc(after.balance_usdc) < amount) {
      io.err(`The wallet holds less than the allowance: fund ${after.token_account} (mint ${after.usdc_mint}) to use it all.`);
    }
  },
};
