// Bounds on the work a creator's schema can ask of the relayer per validation, checked at
// listing. Patterns are handled by the engine (linear-regexp.ts); these are the keywords whose
// cost is not linear in the value:
//
// - `uniqueItems` compares every pair of items: it needs `maxItems` of at most UNIQUE_ITEMS_MAX.
// - References multiply: `anyOf` over two `$ref`s to a definition that does the same, forty
//   levels deep, is a small document that tries 2^40 branches. The subschemas counted with every
//   `$ref` expanded must stay within MAX_EXPANDED_SUBSCHEMAS, which makes validation linear in
//   the value (times that constant). So a `$ref` must be a local JSON pointer, and recursion is
//   refused: its cost grows with the value's depth.

/** `uniqueItems` compares every pair of items: an array it applies to is bounded by this `maxItems`. */
export const UNIQUE_ITEMS_MAX = 1_000;
/** Subschemas of a schema once its references are expanded. */
export const MAX_EXPANDED_SUBSCHEMAS = 10_000;

// Values of these keywords are data, not subschemas; definitions count where they are referred to.
const NOT_SUBSCHEMAS = new Set(["const", "enum", "default", "examples", "$defs", "definitions"]);

/** Why the schema asks too much of a validation (a sentence after `param`), or null. */
export function schemaBoundsProblem(schema: object): string | null {
  const unbounded = unboundedUniqueItems(schema, "");
  if (unbounded !== null) return `${unbounded} has uniqueItems without maxItems of at most ${UNIQUE_ITEMS_MAX}.`;
  try {
    const counter = new ExpandedSize(schema);
    if (counter.size(schema, "#") > MAX_EXPANDED_SUBSCHEMAS) {
      return ` has more than ${MAX_EXPANDED_SUBSCHEMAS} subschemas once its references are expanded.`;
    }
  } catch (error) {
    if (error instanceof BoundsProblem) return error.message;
    throw error;
  }
  return null;
}

class BoundsProblem extends Error {}

/** Counts subschemas with every `$ref` replaced by its target, stopping past the bound. */
class ExpandedSize {
  private readonly sizes = new Map<string, number>();
  private readonly expanding = new Set<string>();

  constructor(private readonly root: object) {}

  size(node: unknown, pointer: string): number {
    if (typeof node !== "object" || node === null) return 0;
    let total = 1;
    const entries = Array.isArray(node) ? node.entries() : Object.entries(node as Record<string, unknown>);
    for (const [key, value] of entries) {
      if (typeof key === "string" && NOT_SUBSCHEMAS.has(key)) continue;
      if (key === "$dynamicRef" || key === "$recursiveRef") {
        throw new BoundsProblem(` has a ${key}, which is not accepted.`);
      }
      total += key === "$ref" ? this.reference(value) : this.size(value, `${pointer}/${String(key)}`);
      if (total > MAX_EXPANDED_SUBSCHEMAS) return total;
    }
    return total;
  }

  private reference(ref: unknown): number {
    if (typeof ref !== "string" || !(ref === "#" || ref.startsWith("#/"))) {
      throw new BoundsProblem(` has a $ref that is not a local JSON pointer (${JSON.stringify(ref)}).`);
    }
    const known = this.sizes.get(ref);
    if (known !== undefined) return known;
    if (this.expanding.has(ref)) {
      throw new BoundsProblem(` refers to itself through $ref (${ref}): recursive schemas are not accepted.`);
    }
    this.expanding.add(ref);
    const size = this.size(resolvePointer(this.root, ref), ref);
    this.expanding.delete(ref);
    this.sizes.set(ref, size);
    return size;
  }
}

function resolvePointer(root: object, ref: string): unknown {
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const segment = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, segment)) {
      throw new BoundsProblem(` has a $ref to nothing (${JSON.stringify(ref)}).`);
    }
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

/** The JSON Pointer of the first subschema with `uniqueItems: true` and no small `maxItems`, or null. */
function unboundedUniqueItems(node: unknown, pointer: string): string | null {
  if (typeof node !== "object" || node === null) return null;
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) {
      const found = unboundedUniqueItems(item, `${pointer}/${index}`);
      if (found !== null) return found;
    }
    return null;
  }
  const record = node as Record<string, unknown>;
  if (record.uniqueItems === true) {
    const max = record.maxItems;
    if (typeof max !== "number" || max > UNIQUE_ITEMS_MAX) return pointer;
  }
  for (const [key, value] of Object.entries(record)) {
    if (key === "const" || key === "enum" || key === "default" || key === "examples") continue;
    const found = unboundedUniqueItems(value, `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`);
    if (found !== null) return found;
  }
  return null;
}
