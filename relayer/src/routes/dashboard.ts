// The dashboard's built files (DASHBOARD_DIR) served on the relayer's own origin, so its
// SameSite=Strict session cookie and the API need no CORS; and GET /dashboard-config.json, which
// tells the app where the indexer's GraphQL is. Any other path outside /v1 answers index.html:
// the app routes in the browser.
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants as zlib, gzip } from "node:zlib";

import type { NetworkName } from "@agent-market/program";

import type { Services } from "../app-services.js";
import { developmentArbiterKey } from "../dev-arbiter.js";
import { ApiError } from "../errors.js";
import type { RouteApp } from "../http/route-app.js";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json", ".txt"]);
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** The encoding the browser accepts that serves `file` smallest: Brotli, else gzip, else none. */
function chooseEncoding(file: string, accepted: string | undefined): "br" | "gzip" | null {
  if (!COMPRESSIBLE.has(extname(file))) return null;
  const names = (accepted ?? "").split(",").map((part) => part.split(";")[0]!.trim().toLowerCase());
  if (names.includes("br")) return "br";
  if (names.includes("gzip")) return "gzip";
  return null;
}

// A page that only ever talks to its own origin, the indexer and the RPC addresses it is given:
// anything else injected is refused.
function contentSecurityPolicy(graphqlUrl: string | undefined, rpcUrls: string[]): string {
  const origins = [...(graphqlUrl === undefined ? [] : [graphqlUrl]), ...rpcUrls].map((url) => new URL(url).origin);
  const connect = ["'self'", ...new Set(origins)];
  return [
    "default-src 'self'",
    `connect-src ${connect.join(" ")}`,
    "img-src 'self' data:",
    "style-src 'self' 'unsafe-inline'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

export function registerDashboard(app: RouteApp, services: Services): void {
  const dashboard = services.config.dashboard;
  if (dashboard === undefined) return;
  const root = resolve(dashboard.dir);
  const devnet = services.config.networks.devnet;
  const rpcUrl = dashboard.localnet ? devnet?.rpc_url : undefined;
  const csp = contentSecurityPolicy(dashboard.indexer_graphql_url, Object.values(dashboard.rpc_urls));
  const served = Object.keys(services.config.networks) as NetworkName[];
  // The built files never change while the relayer runs: each is compressed once, on first ask.
  const compressed = new Map<string, Promise<Buffer>>();
  const encoded = (file: string, encoding: "br" | "gzip"): Promise<Buffer> => {
    const key = `${encoding}:${file}`;
    let body = compressed.get(key);
    if (body === undefined) {
      body = readFile(file).then((raw) =>
        encoding === "br" ? brotli(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length } }) : gzipped(raw, { level: 9 }),
      );
      body.catch(() => compressed.delete(key));
      compressed.set(key, body);
    }
    return body;
  };

  app.get("/dashboard-config.json", { schema: { hide: true } }, async (_request, reply) => {
    reply.header("Cache-Control", "no-store");
    // The market's arbiter per network, so that the page shows the arbiter's screens to it alone.
    const arbiters = Object.fromEntries(
      await Promise.all(served.map(async (network) => [network, (await services.chain.market(network).catch(() => null))?.arbiter.toBase58() ?? null] as const)),
    ) as Partial<Record<NetworkName, string | null>>;
    return {
      arbiters: { devnet: arbiters.devnet ?? null, mainnet: arbiters.mainnet ?? null },
      // Localnet only: the committed development arbiter, to try the arbiter's screens.
      dev_arbiter_secret_key: dashboard.localnet ? await developmentArbiterKey(arbiters.devnet ?? null) : null,
      indexer_graphql_url: dashboard.indexer_graphql_url ?? null,
      networks: served,
      localnet: dashboard.localnet,
      // Localnet only: the listing screen may offer the starter host (routes/dashboard-starter-agent.ts).
      starter_agent: dashboard.starter_agent !== undefined,
      // A local chain's RPC: its address for explorer links, and the relayed path the page itself
      // calls (routes/dashboard-rpc.ts). A hosted chain's only as DASHBOARD_<NETWORK>_RPC_URL names
      // it (the relayer's own RPC URL may carry its provider's key).
      localnet_rpc_url: rpcUrl ?? null,
      rpc_path: rpcUrl === undefined ? null : "/dashboard-rpc",
      rpc_urls: { devnet: dashboard.rpc_urls.devnet ?? null, mainnet: dashboard.rpc_urls.mainnet ?? null },
    };
  });

  app.get("/*", { schema: { hide: true } }, async (request, reply) => {
    const path = decodeURIComponent(request.url.split("?")[0]!);
    if (path === "/v1" || path.startsWith("/v1/")) {
      throw new ApiError("route_not_found", `No endpoint ${request.method} ${path}.`);
    }
    const candidate = normalize(join(root, path));
    let file = join(root, "index.html");
    if (candidate.startsWith(root + sep) && extname(candidate) !== "") {
      const info = await stat(candidate).catch(() => null);
      if (info?.isFile()) file = candidate;
    }
    const html = file.endsWith(".html");
    const encoding = chooseEncoding(file, request.headers["accept-encoding"]);
    const body = encoding === null ? await readFile(file) : await encoded(file, encoding);
    if (encoding !== null) reply.header("Content-Encoding", encoding);
    if (COMPRESSIBLE.has(extname(file))) reply.header("Vary", "Accept-Encoding");
    reply
      .header("Content-Type", CONTENT_TYPES[extname(file)] ?? "application/octet-stream")
      // Vite names assets by content hash: they never change; the page itself always revalidates.
      .header("Cache-Control", html ? "no-cache" : "public, max-age=31536000, immutable")
      .header("X-Content-Type-Options", "nosniff");
    if (html) reply.header("Content-Security-Policy", csp).header("Referrer-Policy", "no-referrer");
    return reply.send(body);
  });
}
