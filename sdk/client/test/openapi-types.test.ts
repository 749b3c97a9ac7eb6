// The committed OpenAPI document and the types generated from it must be those of the relayer's
// current route schemas: a route's change without `npm run openapi:types` fails here.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { DOCUMENT_PATH, generate, TYPES_PATH } from "../scripts/openapi-types.mjs";

describe("generated OpenAPI types", () => {
  it("openapi.json and src/generated/openapi.ts are current (else run npm run openapi:types -w @agent-market/client)", async () => {
    const { document, types } = await generate();
    assert.ok(document === readFileSync(DOCUMENT_PATH, "utf8"), "openapi.json is stale: run npm run openapi:types -w @agent-market/client");
    assert.ok(types === readFileSync(TYPES_PATH, "utf8"), "src/generated/openapi.ts is stale: run npm run openapi:types -w @agent-market/client");
  });

  it("generates the same bytes twice", async () => {
    const [first, second] = [await generate(), await generate()];
    assert.ok(first.document === second.document && first.types === second.types);
  });
});
