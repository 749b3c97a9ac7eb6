// Small byte helpers shared by the modules.

/** Lowercase hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Bytes of a hex string (even length, no prefix). */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new TypeError(`not a hex string: ${hex}`);
  return new Uint8Array(Buffer.from(hex, "hex"));
}

/** Throws unless `bytes` is a Uint8Array of exactly `length` bytes. */
export function requireLength(what: string, bytes: Uint8Array, length: number): Uint8Array {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${what} must be a Uint8Array`);
  if (bytes.length !== length) throw new RangeError(`${what} must be ${length} bytes, got ${bytes.length}`);
  return bytes;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const U64_MAX = (1n << 64n) - 1n;

/** `value` as 8 little-endian bytes; throws unless it is a u64 bigint. */
export function u64Le(what: string, value: bigint): Uint8Array {
  if (typeof value !== "bigint" || value < 0n || value > U64_MAX) {
    throw new RangeError(`${what} must be a u64 bigint, got ${String(value)}`);
  }
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, value, true);
  return out;
}
