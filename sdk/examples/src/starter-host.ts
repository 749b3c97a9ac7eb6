// The starter host: one server answering for many newcomers' starter agents, each under its own
// endpoint (`/agents/<agent address>`) and signed with its own Ed25519 key. The local
// marketplace's relayer asks it for a key on a signed-in wallet's behalf (POST /keys, with the
// host's bearer token); the key's secret never leaves this process and its keys file. Keys are
// kept in that file, so a restart serves the same agents.
import { generateKeyPairSync, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { createAgentService, nodeListener, type AgentService } from "@agent-market/creator";
import { parseAddress } from "@agent-market/program";

import { starterInputSchema, starterOutputSchema, starterReply } from "./agents/starter.js";

/** A wallet's starter agents are few: each is a listing it registers with collateral. */
export const DEFAULT_STARTER_AGENTS_PER_CREATOR = 20;
/** The keys file is read whole at start; this bounds it for all wallets together. */
export const MAX_STARTER_AGENTS = 10_000;
const MAX_ADMIN_BODY_BYTES = 4096;

export interface StarterHostOptions {
  /** The marketplace's request signing key, base58: only its requests are answered. */
  marketplaceKey: string;
  /** The JSON file the keys are kept in (created, mode 0600). */
  keysFile: string;
  /** What the relayer presents to ask for a key: `Authorization: Bearer <token>`. */
  adminToken: string;
  /** 0 (the default): any free port. */
  port?: number;
  /** Defaults to 127.0.0.1: the starter host is for a local marketplace. */
  host?: string;
  maxAgentsPerCreator?: number;
}

/** What POST /keys answers: everything the listing form needs for this agent. */
export interface StarterKey {
  agent: string;
  creator: string;
  endpoint: string;
  signing_key: string;
  /** The key's signature registering it as `agent`'s by `creator` (register_agent's proof). */
  key_proof: string;
  input_schema: typeof starterInputSchema;
  output_schema: typeof starterOutputSchema;
}

export interface RunningStarterHost {
  url: string;
  /** The starter agents it answers for, by agent address. */
  agents(): string[];
  close(): Promise<void>;
}

interface KeptKey {
  creator: string;
  /** The key's 32-byte Ed25519 seed, hex. */
  seed: string;
}

type Problem = { status: number; code: string; message: string };

function readKeys(file: string): Map<string, KeptKey> {
  if (!existsSync(file)) return new Map();
  return new Map(Object.entries(JSON.parse(readFileSync(file, "utf8")) as Record<string, KeptKey>));
}

function newSeed(): Buffer {
  const { privateKey } = generateKeyPairSync("ed25519");
  // PKCS#8 DER of an Ed25519 key ends with its 32-byte seed.
  return privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(text);
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= MAX_ADMIN_BODY_BYTES) chunks.push(chunk);
    });
    req.once("end", () => {
      if (bytes > MAX_ADMIN_BODY_BYTES) return resolve(undefined);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        resolve(undefined);
      }
    });
    req.once("error", () => resolve(undefined));
  });
}

function isAddress(value: unknown): value is string {
  return typeof value === "string" && parseAddress(value) !== null;
}

export async function startStarterHost(options: StarterHostOptions): Promise<RunningStarterHost> {
  const { marketplaceKey, keysFile, port = 0, host = "127.0.0.1" } = options;
  const perCreator = options.maxAgentsPerCreator ?? DEFAULT_STARTER_AGENTS_PER_CREATOR;
  const token = Buffer.from(`Bearer ${options.adminToken}`);
  const keys = readKeys(keysFile);
  // Each agent's service, made once: compiling its schema is most of the cost of an answer.
  const served = new Map<string, { service: AgentService; listener: RequestListener }>();
  let baseUrl = "";

  const save = () => {
    // Written aside and renamed over, so a crash mid-write leaves the previous file whole.
    writeFileSync(`${keysFile}.tmp`, JSON.stringify(Object.fromEntries(keys), null, 2), { mode: 0o600 });
    renameSync(`${keysFile}.tmp`, keysFile);
  };

  const newService = (agent: string, kept: KeptKey) =>
    createAgentService({
      signingKey: Buffer.from(kept.seed, "hex"),
      marketplaceKey,
      agents: [agent],
      // Whatever the creator's listing asks for: the probe and the calls send its parameters.
      inputSchema: true,
      outputSchema: starterOutputSchema,
      handler: starterReply,
      onError: () => {},
    });

  const servedAgent = (agent: string) => {
    let entry = served.get(agent);
    const kept = keys.get(agent);
    if (entry === undefined && kept !== undefined) {
      const service = newService(agent, kept);
      entry = { service, listener: nodeListener(service, { basePath: `/agents/${agent}` }) };
      served.set(agent, entry);
    }
    return entry;
  };

  function issue(body: unknown): StarterKey | Problem {
    const { agent, creator } = (body ?? {}) as { agent?: unknown; creator?: unknown };
    if (!isAddress(agent) || !isAddress(creator)) {
      return { status: 400, code: "invalid_request", message: "the body is {\"agent\": <address>, \"creator\": <address>}" };
    }
    let kept = keys.get(agent);
    if (kept !== undefined && kept.creator !== creator) {
      return { status: 409, code: "agent_taken", message: `agent ${agent} has a starter key of another wallet` };
    }
    if (kept === undefined) {
      const owned = [...keys.values()].filter((k) => k.creator === creator).length;
      if (owned >= perCreator) {
        return { status: 429, code: "too_many_agents", message: `a wallet may have ${perCreator} starter agents` };
      }
      if (keys.size >= MAX_STARTER_AGENTS) {
        return { status: 429, code: "too_many_agents", message: `this starter host serves at most ${MAX_STARTER_AGENTS} agents` };
      }
      kept = { creator, seed: newSeed().toString("hex") };
      keys.set(agent, kept);
      save();
    }
    const { service } = servedAgent(agent)!;
    return {
      agent,
      creator,
      endpoint: `${baseUrl}/agents/${agent}`,
      signing_key: service.publicKey,
      key_proof: service.keyProof(agent, creator),
      input_schema: starterInputSchema,
      output_schema: starterOutputSchema,
    };
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    if (path === "/keys") {
      const given = Buffer.from(req.headers.authorization ?? "");
      if (given.length !== token.length || !timingSafeEqual(given, token)) {
        req.resume();
        return sendJson(res, 401, { error: { code: "unauthorized", message: "POST /keys takes the host's bearer token" } });
      }
      if (req.method !== "POST") {
        req.resume();
        return sendJson(res, 405, { error: { code: "method_not_allowed", message: "use POST /keys" } });
      }
      void readJson(req).then((body) => {
        const answer = issue(body);
        if ("status" in answer) sendJson(res, answer.status, { error: { code: answer.code, message: answer.message } });
        else sendJson(res, 200, answer);
      });
      return;
    }
    const agent = /^\/agents\/([1-9A-HJ-NP-Za-km-z]{32,44})(?:\/|$)/.exec(path)?.[1];
    const listener = agent === undefined ? undefined : servedAgent(agent)?.listener;
    if (listener !== undefined) return listener(req, res);
    req.resume();
    // The kit's own refusal for an agent it does not serve, said for this host.
    sendJson(res, agent === undefined ? 404 : 403, {
      error:
        agent === undefined
          ? { code: "not_found", message: "this starter host answers under /agents/<agent address>/" }
          : {
              code: "agent_not_served",
              message: `this starter host holds no signing key for agent ${agent}: set the starter up for it on the dashboard's List an agent screen`,
            },
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  baseUrl = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  return {
    url: baseUrl,
    agents: () => [...keys.keys()],
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

