// The embedded database of the one-command local marketplace: PGlite (PostgreSQL compiled to
// WebAssembly, data in a folder) served over the PostgreSQL wire protocol by pglite-socket, so
// the relayer runs the very same `pg` code and SQL as against a PostgreSQL server. PGlite is a
// single connection: pglite-socket multiplexes clients and runs their transactions one at a time.
import { mkdirSync } from "node:fs";

import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface EmbeddedPostgres {
  /** postgres://…@127.0.0.1:<port>/postgres */
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(data_dir: string, port = 0): Promise<EmbeddedPostgres> {
  mkdirSync(data_dir, { recursive: true });
  const db = await PGlite.create(data_dir);
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port, maxConnections: 32 });
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
