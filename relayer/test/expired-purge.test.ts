import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { createPool } from "@agent-market/service";

import { ExpiredSignInPurge } from "../src/auth/expired-purge.js";
import { startTestRelayer, type TestRelayer } from "./support.js";

describe("purge of expired sign-in nonces and sessions", () => {
  let relayer: TestRelayer;
  before(async () => {
    relayer = await startTestRelayer();
  });
  after(async () => {
    await relayer.close();
  });

  async function seed(): Promise<{ nonces: string[]; sessions: string[] }> {
    const db = relayer.services.db;
    const id = () => randomBytes(8).toString("hex");
    const nonces = [id(), id(), id()];
    const ages = ["2 days", "1 hour", "-5 minutes"]; // expired long ago, expired lately, still valid
    for (const [i, nonce] of nonces.entries()) {
      await db.query(
        `INSERT INTO sign_in_nonces (nonce, wallet, domain, message, issued_at, expires_at)
         VALUES ($1, 'w', 'd', 'm', now() - interval '3 days', now() - $2::interval)`,
        [nonce, ages[i]],
      );
    }
    const sessions = [id(), id(), id(), id()];
    const rows: [string, string | null][] = [
      ["2 days", null], // expired long ago
      ["-7 days", "2 days"], // revoked long ago
      ["-7 days", "1 hour"], // revoked lately
      ["-7 days", null], // live
    ];
    for (const [i, session] of sessions.entries()) {
      await db.query(
        `INSERT INTO sessions (id, token_hash, wallet, expires_at, revoked_at)
         VALUES ($1, $2, 'w', now() - $3::interval, now() - $4::interval)`,
        [session, randomBytes(32), rows[i]![0], rows[i]![1]],
      );
    }
    return { nonces, sessions };
  }

  async function remaining(table: "sign_in_nonces" | "sessions", column: string, ids: string[]): Promise<string[]> {
    const { rows } = await relayer.services.db.query<{ id: string }>(`SELECT ${column} AS id FROM ${table} WHERE ${column} = ANY($1)`, [ids]);
    return rows.map((row) => row.id).sort();
  }

  it("deletes nonces and sessions a day past their expiry or revocation, and nothing else", async () => {
    const { nonces, sessions } = await seed();
    const purge = new ExpiredSignInPurge(relayer.services.db, { interval_ms: 60_000, onError: (error) => assert.fail(String(error)) });
    assert.deepEqual(await purge.once(), { nonces: 1, sessions: 2 });
    assert.deepEqual(await remaining("sign_in_nonces", "nonce", nonces), [nonces[1]!, nonces[2]!].sort());
    assert.deepEqual(await remaining("sessions", "id", sessions), [sessions[2]!, sessions[3]!].sort());
  });

  it("runs every interval once started, until stopped", async () => {
    const { nonces } = await seed();
    const purge = new ExpiredSignInPurge(relayer.services.db, { interval_ms: 50, onError: (error) => assert.fail(String(error)) });
    purge.start();
    try {
      for (let i = 0; (await remaining("sign_in_nonces", "nonce", nonces)).length === 3; i += 1) {
        assert.ok(i < 100, "the purge never ran");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      purge.stop();
    }
  });

  it("reports a failing purge to its error handler, and keeps running", async () => {
    const broken = createPool("postgres://postgres@127.0.0.1:9/none", { max_connections: 1 });
    const errors: unknown[] = [];
    const purge = new ExpiredSignInPurge(broken, { interval_ms: 20, onError: (error) => errors.push(error) });
    try {
      assert.equal(await purge.once(), null);
      assert.equal(errors.length, 1);
      purge.start();
      while (errors.length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      purge.stop();
      await broken.end();
    }
  });
});
