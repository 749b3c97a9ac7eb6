// Writes schema.graphql and the readers' generated query types (see graphql-types.mjs).
// Run: npm run graphql:types (after changing the schema or a reader's query).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

import { generate, REPO_DIR } from "./graphql-types.mjs";

for (const { path, text } of await generate()) {
  mkdirSync(dirname(join(REPO_DIR, path)), { recursive: true });
  writeFileSync(join(REPO_DIR, path), text);
  console.log(`wrote ${path}`);
}
