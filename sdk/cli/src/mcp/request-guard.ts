// Who may talk to the HTTP transport. Every session spends from the process's API key, so a
// request is answered only when three things hold:
// - its Host names an address the server listens on, or a name it was given: a DNS-rebinding
//   page reaches 127.0.0.1 under its own name, and that name is refused;
// - its Origin, when it has one (browsers always send it), was configured: MCP clients that are
//   not web pages send none, and a page the user merely visits is never one of ours;
// - it carries the bearer token, on every interface, loopback too: any local process or page
//   could otherwise spend.
import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { networkInterfaces } from "node:os";

export interface GuardOptions {
  /** The interface the server listens on, as given to listen(). */
  listen_host: string;
  /** Further names clients may use in Host (a DNS name of this machine, a proxy's). */
  allowed_hosts: string[];
  /** Origins (scheme://host[:port]) whose pages may call; none by default. */
  allowed_origins: string[];
  token: string;
}

export interface Refusal {
  status: 401 | 403;
  message: string;
}

const ANY_INTERFACE = new Set(["0.0.0.0", "::", "[::]"]);

/** Host names as the URL parser gives them: lower case, an IPv6 address in brackets. */
function hostname(text: string): string | undefined {
  try {
    const url = new URL(`http://${text}`);
    return url.username || url.password || url.pathname !== "/" ? undefined : url.hostname;
  } catch {
    return undefined;
  }
}

function listenedNames(listen_host: string): string[] {
  if (!ANY_INTERFACE.has(listen_host)) return [listen_host, "localhost"];
  const addresses = Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
  return [listen_host, ...addresses, "localhost"];
}

function origin(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.origin === "null" ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

export class RequestGuard {
  private readonly hosts: Set<string>;
  private readonly origins: Set<string>;
  private readonly expected_authorization: Buffer;

  constructor(options: GuardOptions) {
    const names = [...listenedNames(options.listen_host), ...options.allowed_hosts];
    this.hosts = new Set(names.map((name) => hostname(name.includes(":") && !name.startsWith("[") ? `[${name}]` : name)).filter((name) => name !== undefined));
    this.origins = new Set(options.allowed_origins.map(origin).filter((value) => value !== undefined));
    this.expected_authorization = Buffer.from(`Bearer ${options.token}`);
  }

  /** Why `headers` are refused, or undefined when they may be served. */
  check(headers: IncomingHttpHeaders): Refusal | undefined {
    const host = hostname(headers.host ?? "");
    if (host === undefined || !this.hosts.has(host)) {
      return { status: 403, message: `forbidden: Host ${headers.host ?? "(none)"} is not an address this server listens on (--allow-host adds a name)` };
    }
    if (headers.origin !== undefined) {
      const given = origin(headers.origin);
      if (given === undefined || !this.origins.has(given)) {
        return { status: 403, message: `forbidden: Origin ${headers.origin} is not allowed (--allow-origin allows one)` };
      }
    }
    const authorization = Buffer.from(headers.authorization ?? "");
    const expected = this.expected_authorization;
    if (authorization.length !== expected.length || !timingSafeEqual(authorization, expected)) {
      return { status: 401, message: "unauthorized: send Authorization: Bearer <token> (AGENT_MARKET_MCP_TOKEN, or the token printed at start)" };
    }
    return undefined;
  }
}
