// Relay connections: `first` between 1 and 100, opaque cursors (base64url of the sort key).
import { graphqlError } from "./errors.js";

export const MAX_PAGE = 100;
export const DEFAULT_PAGE = 20;

export const CONNECTION_TYPE_DEFS = /* GraphQL */ `
  type PageInfo {
    hasNextPage: Boolean!
    endCursor: String
  }
`;

export function connectionTypeDefs(node: string): string {
  return /* GraphQL */ `
    type ${node}Edge {
      cursor: String!
      node: ${node}!
    }
    type ${node}Connection {
      edges: [${node}Edge!]!
      nodes: [${node}!]!
      pageInfo: PageInfo!
    }
  `;
}

export function pageSize(first: number | null | undefined): number {
  const size = first ?? DEFAULT_PAGE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) {
    throw graphqlError("BAD_USER_INPUT", `first must be between 1 and ${MAX_PAGE}`, { argument: "first" });
  }
  return size;
}

export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

export function decodeCursor(cursor: string | null | undefined, shape: readonly ("string" | "number")[]): (string | number)[] | null {
  if (cursor === null || cursor === undefined) return null;
  try {
    const key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(key) && key.length === shape.length && key.every((part, i) => typeof part === shape[i])) return key as (string | number)[];
  } catch {
    // fall through
  }
  throw graphqlError("INVALID_CURSOR", "after is not a cursor this API gave", { argument: "after" });
}

export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  nodes: T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** A page from `size + 1` rows fetched in order. */
export function connection<T>(rows: T[], size: number, keyOf: (row: T) => (string | number)[]): Connection<T> {
  const page = rows.slice(0, size);
  const edges = page.map((node) => ({ cursor: encodeCursor(keyOf(node)), node }));
  return { edges, nodes: page, pageInfo: { hasNextPage: rows.length > size, endCursor: edges.length > 0 ? edges[edges.length - 1]!.cursor : null } };
}
