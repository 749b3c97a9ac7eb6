// The "local test wallet": an Ed25519 keypair kept in this browser's localStorage, so a newcomer
// can try the local marketplace without an extension. Only ever offered on localnet: anyone with
// access to this browser profile holds its key.
import { base58Encode, base64Decode, base64Encode } from "./base58.js";
import { sendAndConfirm } from "./rpc.js";
import { transactionMessage, withSignature } from "./transaction.js";
import type { ConnectedWallet } from "./wallet.js";

const STORAGE_KEY = "agent-market.local-test-wallet";

interface Stored {
  pkcs8: string;
  public: string;
}

async function loadOrCreate(): Promise<{ privateKey: CryptoKey; publicKey: Uint8Array }> {
  const saved = localStorage.getItem(STORAGE_KEY);
  if (saved !== null) {
    const stored = JSON.parse(saved) as Stored;
    const privateKey = await crypto.subtle.importKey("pkcs8", base64Decode(stored.pkcs8) as Uint8Array<ArrayBuffer>, { name: "Ed25519" }, false, ["sign"]);
    return { privateKey, publicKey: base64Decode(stored.public) };
  }
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const publicKey = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  localStorage.setItem(STORAGE_KEY, JSON.stringify({ pkcs8: base64Encode(pkcs8), public: base64Encode(publicKey) } satisfies Stored));
  return { privateKey: pair.privateKey, publicKey };
}

export async function connectLocalWallet(): Promise<ConnectedWallet> {
  const { privateKey, publicKey } = await loadOrCreate();
  const sign = async (bytes: Uint8Array) => new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, privateKey, bytes as BufferSource));
  return {
    name: "Local test wallet",
    icon: null,
    local: true,
    address: base58Encode(publicKey),
    signMessage: sign,
    async signAndSend(transaction, _network, rpcUrl) {
      if (rpcUrl === null) throw new Error("The local test wallet only works on localnet.");
      const { message } = transactionMessage(transaction);
      const signed = withSignature(transaction, publicKey, await sign(message));
      return sendAndConfirm(rpcUrl, base64Encode(signed));
    },
    async disconnect() {},
  };
}
