// Subscriptions: one period of an agent's subscription or hybrid plan, bought with `subscribe`,
// which the relayer signs and the program pays from the wallet's delegate approval, split 99/1.
import { decodeAgent, decodeSubscription, delegatePda, splitPayment, subscribeInstruction, subscriptionPda } from "@agent-market/program";
import { getAssociatedTokenAddressSync, unpackAccount } from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";

import type { AuthenticatedKey } from "../auth/api-keys.js";
import type { ChainService } from "../chain/chain-service.js";
import { ApiError } from "../errors.js";
import { formatUsdc } from "../usdc.js";
import type { Quoter } from "./quote.js";
import { anyFeeShard, errorFromLogs, feePayerShort, senderOf, type Senders } from "./transactions.js";

export class SubscriptionService {
  constructor(
    private readonly chain: ChainService,
    private readonly senders: Senders,
    private readonly quoter: Quoter,
  ) {}

  /**
   * Buys the wallet a period of the agent's subscription: `subscribe`, signed by the relayer,
   * pays the period price through the wallet's delegate approval, split 99/1 at once.
   */
  async subscribe(key: AuthenticatedKey, agent: string): Promise<unknown> {
    const network = key.network;
    const sender = senderOf(this.senders, network);
    await this.quoter.listing(network, agent);
    const agentAddress = new PublicKey(agent);
    const wallet = new PublicKey(key.wallet);
    const market = await this.chain.market(network);
    const payerTokenAccount = getAssociatedTokenAddressSync(market.usdcMint, wallet, true);
    const connection = this.chain.connection(network);
    let infos;
    try {
      infos = await connection.getMultipleAccountsInfo([agentAddress, payerTokenAccount]);
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${network} RPC did not answer: ${(error as Error).message}`);
    }
    if (!infos[0]) throw new ApiError("resource_not_found", `No agent account ${agent} on ${network}.`, "agent_id");
    const onChain = decodeAgent(infos[0].data);
    if (onChain.pricing.kind === "PayPerUse") throw new ApiError("subscription_not_offered");
    const price = onChain.pricing.periodPriceUsdc;
    const token = infos[1] ? unpackAccount(payerTokenAccount, infos[1], infos[1].owner) : null;
    const balance = token?.amount ?? 0n;
    const allowance = token?.delegate?.equals(delegatePda()) ? token.delegatedAmount : 0n;
    if (balance < price || allowance < price) {
      throw new ApiError(balance < price ? "insufficient_balance" : "insufficient_allowance", undefined, undefined, {
        network,
        wallet: wallet.toBase58(),
        mint: market.usdcMint.toBase58(),
        required_usdc: formatUsdc(price),
        balance_usdc: formatUsdc(balance),
        allowance_usdc: formatUsdc(allowance),
      });
    }
    const signed = await sender.sign([
      subscribeInstruction({
        relayer: sender.signer.publicKey,
        usdcMint: market.usdcMint,
        agent: agentAddress,
        payer: wallet,
        payerTokenAccount,
        payoutAccount: onChain.payoutAccount,
        feeShardIndex: anyFeeShard(),
      }),
    ]);
    const sent = await sender.send(signed);
    if (sent.kind === "rejected") {
      if (feePayerShort(sent)) throw new ApiError("relayer_underfunded", undefined, undefined, { network });
      throw new ApiError("escrow_rejected", `subscribe was refused: ${errorFromLogs(sent.message) ?? sent.message}`);
    }
    if (sent.kind === "unknown") {
      throw new ApiError("chain_unavailable", undefined, undefined, { transaction: signed.signature });
    }
    const info = await connection.getAccountInfo(subscriptionPda(agentAddress, wallet), "processed");
    const subscription = decodeSubscription(info!.data);
    const { creatorShareUsdc, feeUsdc } = splitPayment(price);
    return {
      object: "subscription",
      agent,
      wallet: wallet.toBase58(),
      network,
      expires_at: new Date(Number(subscription.expiresAt) * 1000).toISOString(),
      included_calls_remaining: subscription.includedCallsRemaining,
      charge: {
        amount_usdc: formatUsdc(price),
        creator_share_usdc: formatUsdc(creatorShareUsdc),
        fee_usdc: formatUsdc(feeUsdc),
        currency: "USDC",
      },
      transaction: signed.signature,
    };
  }
}
