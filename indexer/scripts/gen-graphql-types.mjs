// Writes schema.graphql and the readers' generated query types (see graphql-types.mjs).
// Run: npm run graphql:types (after changing the schema or a reader's query).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { generate } from "./graphql-types.mjs";

const repoDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
for (const { path, text } of await generate()) {
  mkdirSync(dirname(join(repoDir, path)), { recursive: true });
  writeFileSync(join(repoDir, path), text);
  console.log(`wrote ${path}`);
}
