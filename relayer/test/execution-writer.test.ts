// One writer of `executions`: every statement that inserts, moves or deletes a row is in
// execution-statements.ts, and only the store (execution-store.ts) imports that file, so every
// write goes through a method that asks the transition table first. A write anywhere else would
// pass every other test and move rows past the table, so the sources are read.
import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

// Any statement that writes the table, across line breaks, in any case, quoted or schema-qualified.
const WRITE = /\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM|MERGE\s+INTO|TRUNCATE(?:\s+TABLE)?|COPY)\s+(?:ONLY\s+)?(?:"?public"?\s*\.\s*)?"?executions"?(?![\w$])/gi;
const IMPORTS_STATEMENTS = /from\s+["'][^"']*execution-statements\.js["']/;

describe("the one writer of executions", () => {
  const files = sources(SRC).map((file) => ({ name: file.slice(SRC.length + 1), text: readFileSync(file, "utf8") }));

  it("has every write of the table in execution-statements.ts", () => {
    const writers = files.filter(({ text }) => text.match(WRITE) !== null).map(({ name }) => name);
    assert.deepEqual(writers, ["executions/execution-statements.ts"]);
  });

  it("finds each of the statements there (the pattern is not blind)", () => {
    const text = files.find(({ name }) => name === "executions/execution-statements.ts")!.text;
    // 2 inserts; the owner claim, the advance, the open, 2 settles, the refund, the completion,
    // the failure, and the leaf index's bookkeeping (SETTLE_ALL, REFUND_ALL and RECORD_OPEN also
    // name the table in their FOR UPDATE OF e, which is no write).
    assert.equal(text.match(WRITE)!.length, 11);
    assert.equal("update\n   public.executions e".match(WRITE)?.length, 1);
    assert.equal('DELETE FROM "executions" WHERE'.match(WRITE)?.length, 1);
    assert.equal("INSERT INTO execution_callbacks".match(WRITE), null);
  });

  it("lets only the store use those statements", () => {
    const users = files.filter(({ text }) => IMPORTS_STATEMENTS.test(text)).map(({ name }) => name);
    assert.deepEqual(users, ["executions/execution-store.ts"]);
  });
});
