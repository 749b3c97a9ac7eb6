// The main entry must load in a browser: no Node built-ins, no packages (which could bring
// some) but the program's entries that import nothing, no Buffer or process. Checked on the
// built output, which is what a bundler reads.
import { strict as assert } from "node:assert";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
  exports: Record<string, { import: string }>;
};

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g;
/** The shared USDC rules, network names and Retry-After rule: walked into like the client's own modules. */
const LIGHT_ENTRIES = new Set(["@agent-market/program/usdc", "@agent-market/program/network", "@agent-market/program/retry-after"]);

/** The file a package's entry points at, found as Node does: node_modules upwards, then "exports". */
function entryFile(specifier: string): string {
  const [scope, name, ...rest] = specifier.split("/");
  for (let dir = packageDir; ; dir = dirname(dir)) {
    const packageRoot = join(dir, "node_modules", scope!, name!);
    if (existsSync(join(packageRoot, "package.json"))) {
      const exports = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")).exports as Record<string, { import: string }>;
      return join(packageRoot, exports[["."].concat(rest).join("/")]!.import);
    }
    if (dirname(dir) === dir) throw new Error(`${specifier} is not installed`);
  }
}

/** Every module the entry reaches, with the specifiers each imports. */
function moduleGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (graph.has(file)) continue;
    const specifiers = [...readFileSync(file, "utf8").matchAll(SPECIFIER)].map((m) => m[1]!);
    graph.set(file, specifiers);
    for (const specifier of specifiers) {
      if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier));
      else if (LIGHT_ENTRIES.has(specifier)) pending.push(entryFile(specifier));
    }
  }
  return graph;
}

describe("the main entry in a browser", () => {
  const entry = join(packageDir, manifest.exports["."]!.import);
  before(function () {
    if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first`);
  });

  it("imports nothing but its own modules: no node: built-ins, no packages", () => {
    const graph = moduleGraph(entry);
    assert.ok(graph.size >= 5, `reached ${graph.size} modules`);
    for (const [file, specifiers] of graph) {
      for (const specifier of specifiers) {
        assert.ok(specifier.startsWith("./") || specifier.startsWith("../") || LIGHT_ENTRIES.has(specifier), `${file} imports ${specifier}`);
      }
    }
    const verify = join(packageDir, manifest.exports["./verify"]!.import);
    assert.ok(!graph.has(verify), "the verify entry (web3.js, anchor) stays out of the main one");
  });

  it("uses no Node globals", () => {
    for (const file of moduleGraph(entry).keys()) {
      const code = readFileSync(file, "utf8").replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "");
      for (const global of [/\bBuffer\b/, /\bprocess\./, /\brequire\(/, /\b__dirname\b/, /\bsetImmediate\b/]) {
        assert.doesNotMatch(code, global, file);
      }
    }
  });
});
