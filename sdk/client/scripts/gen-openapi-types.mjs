// Writes openapi.json and src/generated/openapi.ts from the relayer's route schemas.
// Run: npm run openapi:types -w @agent-market/client (after changing a route's schema).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

import { DOCUMENT_PATH, generate, TYPES_PATH } from "./openapi-types.mjs";

const { document, types } = await generate();
writeFileSync(DOCUMENT_PATH, document);
mkdirSync(dirname(TYPES_PATH), { recursive: true });
writeFileSync(TYPES_PATH, types);
console.log(`wrote ${DOCUMENT_PATH} and ${TYPES_PATH}`);
