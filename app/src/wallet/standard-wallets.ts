// Browser wallets that implement the Wallet Standard (Phantom, Solflare, Backpack, …): discovered
// through the standard's registry, kept if they can connect and sign messages on a Solana chain.
import { getWallets } from "@wallet-standard/app";
import type { Wallet, WalletAccount } from "@wallet-standard/base";
import {
  SolanaSignAndSendTransaction,
  SolanaSignMessage,
  SolanaSignTransaction,
  type SolanaSignAndSendTransactionFeature,
  type SolanaSignMessageFeature,
  type SolanaSignTransactionFeature,
} from "@solana/wallet-standard-features";
import { StandardConnect, StandardDisconnect, type StandardConnectFeature, type StandardDisconnectFeature } from "@wallet-standard/features";

import { base58Encode, base64Encode } from "./base58.js";
import { sendAndConfirm } from "./rpc.js";
import type { ConnectedWallet } from "./wallet.js";

export function usable(wallet: Wallet): boolean {
  return (
    StandardConnect in wallet.features &&
    SolanaSignMessage in wallet.features &&
    wallet.chains.some((chain) => chain.startsWith("solana:"))
  );
}

/** The usable wallets now, and a subscription to those registered later (extensions load late). */
export function watchWallets(onChange: (wallets: Wallet[]) => void): () => void {
  const registry = getWallets();
  const emit = () => onChange(registry.get().filter(usable));
  emit();
  const off1 = registry.on("register", emit);
  const off2 = registry.on("unregister", emit);
  return () => {
    off1();
    off2();
  };
}

export async function connectStandardWallet(wallet: Wallet, options: { silent?: boolean } = {}): Promise<ConnectedWallet> {
  const features = wallet.features as Partial<
    StandardConnectFeature & StandardDisconnectFeature & SolanaSignMessageFeature & SolanaSignTransactionFeature & SolanaSignAndSendTransactionFeature
  >;
  const { accounts } = await features[StandardConnect]!.connect(options.silent ? { silent: true } : undefined);
  const account: WalletAccount | undefined = accounts[0];
  if (account === undefined) throw new Error(`${wallet.name} shared no account.`);
  return {
    name: wallet.name,
    icon: wallet.icon,
    local: false,
    address: base58Encode(Uint8Array.from(account.publicKey)),
    async signMessage(message) {
      const [result] = await features[SolanaSignMessage]!.signMessage({ account, message });
      return result!.signature;
    },
    async signAndSend(transaction, network, rpcUrl) {
      const chain = `solana:${network}` as const;
      if (rpcUrl === null && features[SolanaSignAndSendTransaction]) {
        const [result] = await features[SolanaSignAndSendTransaction].signAndSendTransaction({ account, transaction, chain });
        return base58Encode(result!.signature);
      }
      const signer = features[SolanaSignTransaction];
      if (!signer) throw new Error(`${wallet.name} cannot sign transactions.`);
      const [result] = await signer.signTransaction({ account, transaction, chain });
      if (rpcUrl === null) throw new Error(`${wallet.name} cannot send transactions itself.`);
      return sendAndConfirm(rpcUrl, base64Encode(result!.signedTransaction));
    },
    async disconnect() {
      await features[StandardDisconnect]?.disconnect();
    },
  };
}
