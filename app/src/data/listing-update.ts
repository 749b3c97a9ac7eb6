// Updating a listing from the web: update_agent signed by the creator's wallet carries the new
// document's hash and pricing (the endpoint, signing key, payout account and time limit stay as
// the Agent account holds them), then the relayer's listing follows, checked against the chain.
// The key stays, so update_agent needs no signing-key proof.
import type { Agent as Listing, Pricing as WirePricing, WalletSession } from "@agent-market/client";
import type { Pricing } from "@agent-market/program";

import type { ConnectedWallet } from "../wallet/wallet.js";
import { signAndSendInstructions, type Chain } from "./chain.js";
import type { CheckedDocument } from "./listing-document.js";

export interface ListingUpdate {
  document: CheckedDocument;
  pricing: { chain: Pricing; wire: WirePricing };
}

export async function updateListing(chain: Chain, wallet: ConnectedWallet, session: WalletSession, address: string, update: ListingUpdate): Promise<{ signature: string; listing: Listing }> {
  const { fetchAgent, listingHash, updateAgentInstruction } = chain.program;
  const agent = new chain.web3.PublicKey(address);
  const account = await fetchAgent(chain.connection, agent, { programId: chain.programId });
  if (account === null) throw new Error(`${address} has no Agent account on chain.`);
  if (account.creator.toBase58() !== wallet.address) throw new Error(`${address} belongs to ${account.creator.toBase58()}, not to this wallet.`);
  // The program reads the payout account's owner (the token account's bytes 32..64) to refuse accounts it or its delegate owns.
  const payout = await chain.connection.getAccountInfo(account.payoutAccount);
  if (payout === null) throw new Error(`The payout account ${account.payoutAccount.toBase58()} does not exist.`);
  const payoutOwner = new chain.web3.PublicKey(payout.data.subarray(32, 64));
  const signature = await signAndSendInstructions(chain, wallet, [
    updateAgentInstruction({
      programId: chain.programId,
      creator: new chain.web3.PublicKey(wallet.address),
      agent,
      payoutAccount: account.payoutAccount,
      payoutOwner,
      terms: {
        signingKey: account.signingKey,
        endpoint: account.endpoint,
        listingHash: listingHash(update.document),
        pricing: update.pricing.chain,
        maxExecutionSecs: account.maxExecutionSecs,
      },
    }),
  ]);
  const listing = await session.listings.update(address, { ...update.document, pricing: update.pricing.wire }, { network: chain.network });
  return { signature, listing };
}
