import { readFileSync } from "node:fs";

/** The package's version, from its package.json (next to dist/ and src/ alike). */
export function version(): string {
  return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
}
