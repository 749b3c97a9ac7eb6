// The committed SDL, the resolver types and the query types generated from it must be those of the
// current schema, mappers and queries: a schema change that a resolver or a reader's query no
// longer fits, or a query changed without `npm run graphql:types`, fails here.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { documentsOf, generate, REPO_DIR } from "../scripts/graphql-types.mjs";

describe("generated GraphQL types", () => {
  it("schema.graphql, the resolver types and every reader's generated/graphql.ts are current (else run npm run graphql:types)", async () => {
    const files = await generate();
    assert.deepEqual(
      files.map((file) => file.path),
      [
        "indexer/schema.graphql",
        "indexer/src/graphql/generated/resolvers.ts",
        "relayer/src/indexer/generated/graphql.ts",
        "app/src/data/generated/graphql.ts",
        "sdk/program/src/generated/graphql.ts",
      ],
    );
    for (const { path, text } of files) {
      assert.ok(text === readFileSync(join(REPO_DIR, path), "utf8"), `${path} is stale: run npm run graphql:types`);
    }
  });

  it("refuses a query built with ${…}, which no generated type could describe", () => {
    const source = "const Q = /* GraphQL */ `query { agents(first: ${SIZE}) { pageInfo { hasNextPage } } }`;";
    assert.throws(() => documentsOf(source, "x.ts"), /x\.ts: a \/\* GraphQL \*\/ document with \$\{…\} cannot be typed/);
    assert.deepEqual(documentsOf("const Q = /* GraphQL */ `query A { market { feeBps } }`;", "y.ts"), ["query A { market { feeBps } }"]);
  });
});
