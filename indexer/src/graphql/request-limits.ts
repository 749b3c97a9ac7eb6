// Bounds checked before a GraphQL document is parsed: the body's size, read with a cap rather than
// trusted from Content-Length (a chunked body has none), and the number of tokens the parser will
// look at, so that a huge or pathological document costs no more than a small one to refuse (with
// the code of the first limit it breaks, token-limit.ts). The depth, alias and cost limits
// (limits.ts) then run on what parsed.
import { parse, type ParseOptions, type Source } from "graphql";
import type { Plugin } from "graphql-yoga";

import type { QueryLimits } from "./limits.js";
import { isTokenLimitError, tokenLimitRefusal } from "./token-limit.js";

export interface RequestBounds {
  maxBodyBytes: number;
  maxTokens: number;
}

/** The dashboard's largest operation is a few hundred tokens and a few kilobytes. */
export const DEFAULT_REQUEST_BOUNDS: RequestBounds = { maxBodyBytes: 64 * 1024, maxTokens: 3_000 };

function tooLarge(fetchAPI: { Response: typeof Response }, maxBodyBytes: number): Response {
  const body = { errors: [{ message: `the request body is over ${maxBodyBytes} bytes`, extensions: { code: "BODY_TOO_LARGE", maxBytes: maxBodyBytes } }] };
  return new fetchAPI.Response(JSON.stringify(body), { status: 413, headers: { "content-type": "application/json" } });
}

/** The body as text, or null as soon as it passes `maxBytes` (the rest is not read). */
async function readCapped(request: Request, maxBytes: number): Promise<string | null> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(out);
}

export function requestBoundsPlugin(bounds: RequestBounds, limits: QueryLimits): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (request.method !== "POST" || !requestParser) return;
      setRequestParser(async (incoming) => {
        if (Number(incoming.headers.get("content-length") ?? 0) > bounds.maxBodyBytes) return tooLarge(fetchAPI, bounds.maxBodyBytes);
        const body = await readCapped(incoming, bounds.maxBodyBytes);
        if (body === null) return tooLarge(fetchAPI, bounds.maxBodyBytes);
        return requestParser(new fetchAPI.Request(incoming.url, { method: "POST", headers: incoming.headers, body }));
      });
    },
    onParse({ setParseFn }) {
      setParseFn((source: string | Source, options?: ParseOptions) => {
        try {
          return parse(source, { ...options, maxTokens: bounds.maxTokens });
        } catch (error) {
          if (isTokenLimitError(error)) throw tokenLimitRefusal(source, bounds.maxTokens, limits);
          throw error;
        }
      });
    },
  };
}
