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

/** The development arbiter's name as a wallet: the name a stored session reconnects it by. */
export const DEV_ARBITER_WALLET = "Development arbiter";

// PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410): WebCrypto imports private keys only so.
const PKCS8_ED25519_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

/** Localnet's committed development arbiter (a Solana 64-byte secret key: seed, then public key). */
export async function connectDevelopmentArbiter(secretKey: number[]): Promise<ConnectedWallet> {
  const pkcs8 = Uint8Array.from([...PKCS8_ED25519_PREFIX, ...secretKey.slice(0, 32)]);
  const privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
  return keyWallet(DEV_ARBITER_WALLET, privateKey, Uint8Array.from(secretKey.slice(32)));
}

export async function connectLocalWallet(): Promise<ConnectedWallet> {
  const { privateKey, publicKey } = await loadOrCreate();
  return keyWallet("Local test wallet", privateKey, publicKey);
}

function keyWallet(name: string, privateKey: CryptoKey, publicKey: Uint8Array): ConnectedWallet {
  const sign = async (bytes: Uint8Array) => new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, privateKey, bytes as BufferSource));
  return {
    name,
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
