import type { NetworkName } from "@agent-market/program/network";
// What the dashboard needs from a wallet, whichever kind it is.
export interface ConnectedWallet {
  name: string;
  icon: string | null;
  /** The browser-kept test keypair (localnet only). */
  local: boolean;
  address: string;
  signMessage(message: Uint8Array): Promise<Uint8Array>;
  /**
   * Signs the relayer's unsigned transaction and sends it; resolves with the signature (base58).
   * `rpcUrl` is the local chain, where wallets that cannot send there are given a signed copy to send.
   */
  signAndSend(transaction: Uint8Array, network: NetworkName, rpcUrl: string | null): Promise<string>;
  disconnect(): Promise<void>;
}
