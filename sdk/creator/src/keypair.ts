// The creator's signing key from a Solana CLI keypair file (`solana-keygen new -o key.json`): a
// JSON array of the 64 bytes seed ‖ public key.
import { readFile } from "node:fs/promises";

import { ed25519PublicKey, toHex } from "@agent-market/program";

/** The 64-byte secret key of a Solana CLI keypair JSON text; throws if it is not one. */
export function parseKeypairJson(text: string): Uint8Array {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TypeError("a keypair file holds a JSON array of 64 numbers, and this is not JSON");
  }
  if (!Array.isArray(value) || value.length !== 64) {
    throw new TypeError("a keypair file holds a JSON array of 64 numbers");
  }
  if (!value.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) {
    throw new TypeError("a keypair file's numbers are bytes, integers 0..255");
  }
  const secretKey = Uint8Array.from(value as number[]);
  // A file whose halves disagree would sign with a key other than the one it claims.
  if (toHex(ed25519PublicKey(secretKey)) !== toHex(secretKey.subarray(32))) {
    throw new TypeError("the keypair's public key (its last 32 bytes) does not belong to its seed");
  }
  return secretKey;
}

export async function readKeypairFile(path: string): Promise<Uint8Array> {
  const text = await readFile(path, "utf8");
  try {
    return parseKeypairJson(text);
  } catch (error) {
    throw new TypeError(`${path}: ${(error as Error).message}`);
  }
}
