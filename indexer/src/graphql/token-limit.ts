// A document past the parser's token limit never parses, so the depth and alias limits (limits.ts)
// would never see it and every such refusal would read as a syntax error. Each limit has one
// code whichever check meets the query first: the tokens read before the parser stopped are
// scanned here for the limits they already break (an alias bomb is TOO_MANY_ALIASES however long
// it is), and only a document that breaks none of them is TOO_MANY_TOKENS.
import { Lexer, Source, TokenKind, type GraphQLError } from "graphql";

import { graphqlError } from "./errors.js";
import type { QueryLimits } from "./limits.js";

/** graphql-js's message when `maxTokens` stops it. */
export function isTokenLimitError(error: unknown): boolean {
  return error instanceof Error && /Document contains more tha[nt] \d+ tokens/.test(error.message);
}

/**
 * The refusal of a document with more than `maxTokens` tokens. Counts over its first `maxTokens`
 * tokens, outside arguments and variable definitions (where `name: value` is no alias): a field
 * name followed by `:` and another name is an alias, and a field's depth is the braces around it.
 */
export function tokenLimitRefusal(source: string | Source, maxTokens: number, limits: Pick<QueryLimits, "maxDepth" | "maxAliases">): GraphQLError {
  const lexer = new Lexer(typeof source === "string" ? new Source(source) : source);
  let braces = 0;
  let parentheses = 0;
  let aliases = 0;
  let depth = 0;
  let previous: TokenKind | undefined;
  let beforePrevious: TokenKind | undefined;
  for (let read = 0; read < maxTokens; read += 1) {
    let kind: TokenKind;
    try {
      kind = lexer.advance().kind;
    } catch {
      break;
    }
    if (kind === TokenKind.EOF) break;
    if (kind === TokenKind.PAREN_L) parentheses += 1;
    else if (kind === TokenKind.PAREN_R) parentheses = Math.max(0, parentheses - 1);
    else if (parentheses === 0) {
      if (kind === TokenKind.BRACE_L) braces += 1;
      else if (kind === TokenKind.BRACE_R) braces = Math.max(0, braces - 1);
      else if (kind === TokenKind.NAME && braces > 0) {
        depth = Math.max(depth, braces);
        if (previous === TokenKind.COLON && beforePrevious === TokenKind.NAME) aliases += 1;
      }
    }
    beforePrevious = previous;
    previous = kind;
  }
  if (depth > limits.maxDepth) return graphqlError("QUERY_TOO_DEEP", `the query is at least ${depth} levels deep; at most ${limits.maxDepth}`, { depth });
  if (aliases > limits.maxAliases) return graphqlError("TOO_MANY_ALIASES", `the query has at least ${aliases} aliases; at most ${limits.maxAliases}`, { aliases });
  return graphqlError("TOO_MANY_TOKENS", `the document has more than ${maxTokens} tokens; at most ${maxTokens}`, { maxTokens });
}
