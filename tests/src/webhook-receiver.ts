// A webhook receiver for the tests: a real HTTP server on loopback that keeps every delivery the
// standardwebhooks package verifies under one of its secrets, and answers after `delay_ms`.
import http from "node:http";
import type { AddressInfo } from "node:net";

import { Webhook } from "standardwebhooks";

import { sleep } from "./localnet.js";

export interface Event {
  secret_of: string;
  id: string;
  type: string;
  data: { id: string; status: string };
}

/** A receiver on loopback: keeps every delivery that verifies under one of `secrets`. */
export class Receiver {
  readonly events: Event[] = [];
  readonly secrets: string[] = [];
  delay_ms = 0;
  private server: http.Server | undefined;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const body = Buffer.concat(chunks).toString();
        for (const secret of this.secrets) {
          try {
            const event = new Webhook(secret).verify(body, request.headers as Record<string, string>) as Omit<Event, "secret_of" | "id">;
            this.events.push({ ...event, secret_of: secret, id: String(request.headers["webhook-id"]) });
          } catch {
            // signed with another secret
          }
        }
        setTimeout(() => response.writeHead(200).end(), this.delay_ms);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}

export async function until(what: string, check: () => boolean, timeout_ms = 30_000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
