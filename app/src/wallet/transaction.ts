// A serialized legacy Solana transaction, enough of it to place one signer's signature: the
// signature slots, then the message whose first `required` account keys are the signers.
function shortVec(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    const byte = bytes[at + i]!;
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return { value, next: at + i + 1 };
  }
  throw new Error("malformed transaction: bad length prefix");
}

export function transactionMessage(tx: Uint8Array): { message: Uint8Array; signaturesAt: number; signatures: number } {
  const { value: signatures, next } = shortVec(tx, 0);
  return { message: tx.subarray(next + 64 * signatures), signaturesAt: next, signatures };
}

/** The transaction with `signature` written into `signer`'s slot. */
export function withSignature(tx: Uint8Array, signer: Uint8Array, signature: Uint8Array): Uint8Array {
  const { message, signaturesAt, signatures } = transactionMessage(tx);
  const required = message[0]!;
  const keys = shortVec(message, 3);
  for (let i = 0; i < Math.min(required, signatures); i++) {
    const key = message.subarray(keys.next + 32 * i, keys.next + 32 * (i + 1));
    if (key.every((b, j) => b === signer[j])) {
      const signed = Uint8Array.from(tx);
      signed.set(signature, signaturesAt + 64 * i);
      return signed;
    }
  }
  throw new Error("this wallet is not a signer of the transaction");
}
