import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { buildApp } from "../src/app.js";
import { parseConfig } from "../src/config.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { createServices } from "../src/services.js";
import { bearer, errorOf, signIn, testEnv } from "./support.js";

describe("embedded database (PGlite through pglite-socket)", function () {
  this.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), "relayer-pglite-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function relayerOn(env: Record<string, string>) {
    const embedded = await startEmbeddedPostgres(join(dir, "pgdata"));
    const config = parseConfig({ ...env, DATABASE_URL: embedded.url, DATABASE_PREPARED_STATEMENTS: "false" });
    const services = await createServices(config);
    const app = await buildApp(services);
    return {
      app,
      services,
      async close() {
        await app.close();
        await services.close();
        await embedded.stop();
      },
    };
  }

  it("runs the same migrations and SQL, concurrently, and keeps its state across restarts", async () => {
    const env = testEnv("postgres://unused/unused");
    const first = await relayerOn(env);
    let secret: string;
    let token: string;
    try {
      token = await signIn(first.app);
      const keys = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          first.app.inject({ method: "POST", url: "/v1/keys", headers: bearer(token), payload: { name: `k${i}`, environment: "test" } }),
        ),
      );
      assert.deepEqual(keys.map((k) => k.statusCode), Array(8).fill(201));
      secret = keys[0]!.json().secret;
      const verified = await Promise.all(
        Array.from({ length: 50 }, () => first.app.inject({ method: "GET", url: "/v1/whoami", headers: bearer(secret) })),
      );
      assert.ok(verified.every((r) => r.statusCode === 200));
    } finally {
      await first.close();
    }

    const second = await relayerOn(env);
    try {
      assert.equal((await second.app.inject({ method: "GET", url: "/v1/whoami", headers: bearer(secret) })).statusCode, 200);
      const listed = await second.app.inject({ method: "GET", url: "/v1/keys?limit=100", headers: bearer(token) });
      assert.equal(listed.json().data.length, 8);
      const id = listed.json().data.find((k: { last4: string }) => k.last4 === secret.slice(-4)).id;
      await second.app.inject({ method: "DELETE", url: `/v1/keys/${id}`, headers: bearer(token) });
      const refused = await second.app.inject({ method: "GET", url: "/v1/whoami", headers: bearer(secret) });
      assert.equal(errorOf(refused).code, "revoked_api_key");
    } finally {
      await second.close();
    }
  });

  it("is chosen with EMBEDDED_DATABASE_DIR, which excludes DATABASE_URL", () => {
    const env = testEnv("postgres://127.0.0.1/x");
    assert.throws(() => parseConfig({ ...env, EMBEDDED_DATABASE_DIR: dir }), /exclude each other/);
    const { DATABASE_URL: _unused, ...rest } = env;
    assert.equal(parseConfig({ ...rest, EMBEDDED_DATABASE_DIR: dir }).embedded_database_dir, dir);
  });
});
