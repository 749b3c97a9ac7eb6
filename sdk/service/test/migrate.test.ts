// The migration runner, against a real PostgreSQL: each file once, in name order, each in its own
// transaction (a failing one keeps those before it), a schema written into the files, and
// processes starting together applying each file exactly once.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { createPool, dropDatabase, ensureDatabase, migrate, type Pool } from "../src/index.js";
import { databaseUrl } from "./postgres.js";

describe("migrate", () => {
  const url = databaseUrl(`service_migrate_${process.pid}`);
  let pool: Pool;
  let dir: string;

  beforeEach(async () => {
    await dropDatabase(url);
    await ensureDatabase(url);
    pool = createPool(url, { max_connections: 8 });
    dir = mkdtempSync(join(tmpdir(), "migrations-"));
  });
  afterEach(async () => {
    await pool.end();
    await dropDatabase(url);
    rmSync(dir, { recursive: true, force: true });
  });

  const write = (name: string, sql: string) => writeFileSync(join(dir, name), sql);
  const tables = async (schema: string) =>
    (await pool.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", [schema])).rows.map(
      (row) => row.table_name,
    );

  it("applies the files in name order, once, and ignores what is not NNNN_name.sql", async () => {
    write("0002_second.sql", "ALTER TABLE things ADD COLUMN size int");
    write("0001_first.sql", "CREATE TABLE things (id int)");
    write("README.md", "not a migration");
    write("3_loose.sql", "CREATE TABLE loose (id int)");
    const migrations = { dir, history_table: "schema_migrations", lock: "test" };
    assert.deepEqual(await migrate(pool, migrations), ["0001_first.sql", "0002_second.sql"]);
    assert.deepEqual(await migrate(pool, migrations), []);
    write("0003_third.sql", "CREATE TABLE others (id int)");
    assert.deepEqual(await migrate(pool, migrations), ["0003_third.sql"]);
    assert.deepEqual(await tables("public"), ["others", "schema_migrations", "things"]);
  });

  it("writes the schema into the files and keeps the history in it", async () => {
    write("0001_first.sql", "CREATE TABLE {{schema}}.events (id int)");
    const migrations = { dir, history_table: "indexer_devnet.migrations", lock: "migrate:indexer_devnet", schema: "indexer_devnet" };
    assert.deepEqual(await migrate(pool, migrations), ["0001_first.sql"]);
    assert.deepEqual(await tables("indexer_devnet"), ["events", "migrations"]);
    assert.deepEqual(await migrate(pool, { ...migrations, history_table: "indexer_mainnet.migrations", schema: "indexer_mainnet", lock: "migrate:indexer_mainnet" }), [
      "0001_first.sql",
    ]);
  });

  it("keeps what applied before a failing file, names that file, and applies the rest once it is mended", async () => {
    write("0001_first.sql", "CREATE TABLE things (id int)");
    write("0002_broken.sql", "CREATE TABLE halfway (id int); SELECT no_such_function()");
    const migrations = { dir, history_table: "schema_migrations", lock: "test" };
    await assert.rejects(migrate(pool, migrations), /^Error: migration 0002_broken\.sql failed: function no_such_function\(\) does not exist$/);
    assert.deepEqual(await tables("public"), ["schema_migrations", "things"], "the failed file left nothing behind");
    write("0002_broken.sql", "CREATE TABLE halfway (id int)");
    assert.deepEqual(await migrate(pool, migrations), ["0002_broken.sql"]);
  });

  it("applies each file once when several processes start together", async () => {
    // Not idempotent: a second application would fail on the existing table.
    write("0001_first.sql", "CREATE TABLE things (id int)");
    write("0002_second.sql", "SELECT pg_sleep(0.2); CREATE TABLE others (id int)");
    const migrations = { dir, history_table: "schema_migrations", lock: "test" };
    const runs = await Promise.all(Array.from({ length: 4 }, () => migrate(pool, migrations)));
    assert.deepEqual(runs.flat().sort(), ["0001_first.sql", "0002_second.sql"]);
  });

  it("refuses a history table or schema that is not a plain name", async () => {
    await assert.rejects(migrate(pool, { dir, history_table: "x; DROP TABLE y", lock: "test" }), /^Error: invalid history table "x; DROP TABLE y"$/);
    await assert.rejects(migrate(pool, { dir, history_table: "m", lock: "test", schema: "Bad-Name" }), /^Error: invalid schema name "Bad-Name"$/);
  });
});
