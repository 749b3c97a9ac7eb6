// What a metered agent's handler returns: its output and the units the call used, which the
// creator signs in the result digest (execute protocol version 2). A fixed-price handler returns
// its output alone, answered without units and signed with units 0.

const U64_MAX = (1n << 64n) - 1n;

/** An output with the metered units the call used; made by `metered`. */
export class Metered<O = unknown> {
  private constructor(
    readonly output: O,
    readonly units: bigint,
  ) {}

  /** @internal: use `metered`. */
  static of<O>(output: O, units: bigint): Metered<O> {
    if (typeof units !== "bigint" || units < 0n || units > U64_MAX) {
      throw new RangeError(`units must be a u64 bigint, got ${String(units)}`);
    }
    return new Metered(output, units);
  }
}

/**
 * `return metered(output, units)` from a handler answers `output` with `units` (a u64) signed in
 * the result digest. A class instance, not a plain object, so that no output is mistaken for it.
 */
export function metered<O>(output: O, units: bigint): Metered<O> {
  return Metered.of(output, units);
}
