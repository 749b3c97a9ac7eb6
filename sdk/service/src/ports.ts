// Ports for the servers a test or a benchmark starts. Taken below the kernel's ephemeral range (32768 and up on
// Linux), where no outgoing connection of anything on the machine can take one between its
// choice and its server's listen; a port that answers a listen now is the one handed out.
import { createServer } from "node:net";

const PORT_RANGE = { from: 20_000, to: 32_000 };

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** The first of `count` consecutive ports free now. */
export async function freePortBlock(count: number): Promise<number> {
  for (;;) {
    const first = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from - count));
    let free = true;
    for (let port = first; port < first + count && free; port += 1) free = await isFree(port);
    if (free) return first;
  }
}

/** A port free now. */
export function freePort(): Promise<number> {
  return freePortBlock(1);
}
