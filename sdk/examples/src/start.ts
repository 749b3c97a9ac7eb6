// Starting an example agent in-process: for tests and the one-command local marketplace.
import type { AddressInfo } from "node:net";

import { createAgentService, type AgentServiceOptions } from "@agent-market/creator";

/** What an example agent needs besides its own schemas and handler. */
export type StartOptions = Omit<AgentServiceOptions, "inputSchema" | "outputSchema" | "handler"> & {
  /** 0 (the default) takes any free port. */
  port?: number;
  /** Defaults to 127.0.0.1: the example agents are for local use. */
  host?: string;
};

export interface RunningAgent {
  /** The agent's endpoint: POST `${url}/execute`, GET `${url}/health`. */
  url: string;
  /** The base58 public key it signs results with. */
  publicKey: string;
  /** The signing-key proof (base58) registering this agent's key as `agent`'s by `creator` needs. */
  keyProof(agent: string, creator: string): string;
  close(): Promise<void>;
}

export async function startAgent<P, O>(
  agent: Pick<AgentServiceOptions<P, O>, "inputSchema" | "outputSchema" | "handler">,
  options: StartOptions,
): Promise<RunningAgent> {
  const { port = 0, host = "127.0.0.1", ...serviceOptions } = options;
  const service = createAgentService<P, O>({ ...serviceOptions, ...agent });
  const server = await service.listen(port, host);
  const address = server.address() as AddressInfo;
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}`,
    publicKey: service.publicKey,
    keyProof: service.keyProof,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // A stopped agent stops now: calls in flight fail as they would if it crashed.
        server.closeAllConnections();
      }),
  };
}
