/** A subscription purchase's id: `sub_` and 16 random bytes in base58, never an execution's. */
export const PURCHASE_PREFIX = "sub_";
