// The shared test support (src/) is the workspace package `@agent-market/tests`, imported by name
// from its "exports" (`@agent-market/tests/fixtures`) by a workspace that lists it among its
// dependencies. A relative path into tests/ from another workspace would bypass both: npm would
// not order or install the support for it, and moving a file here would break a reader there.
// Data read by path (tests/vectors, read by sdk/program, which this package depends on) is not an
// import and stays out of this check.
import { strict as assert } from "node:assert";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

import { REPO_ROOT } from "./src/localnet.js";

const TESTS_DIR = join(REPO_ROOT, "tests");
const PACKAGE = "@agent-market/tests";
const SOURCE = /\.(?:[cm]?[jt]s|tsx|jsx)$/;
// Folders of generated or installed files, whose imports are not the repository's own.
const SKIPPED = new Set([".git", "node_modules", "dist", "target", ".anchor", "test-ledger", ".agent-market"]);

/** Every module specifier of a source: static imports and re-exports, side-effect imports,
 * dynamic `import()` and `require()`. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(["'])([^"'\n]+)\1/g;
  for (const match of source.matchAll(pattern)) found.push(match[2]!);
  return found;
}

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (entry.isFile() && SOURCE.test(entry.name)) files.push(path);
  }
  return files;
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir + sep);
}

/** The nearest package.json above a file: the workspace it belongs to ("" above every one). */
function manifestOf(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return join(dir, "package.json");
    if (dirname(dir) === dir) return "";
  }
}

describe("shared test support imports", () => {
  const outside = sourceFiles(REPO_ROOT).filter((file) => !inside(file, TESTS_DIR));

  it("no file outside tests/ imports tests/ by a relative path", () => {
    assert.ok(outside.length >= 100, `found ${outside.length} source files`);
    const offending = outside.flatMap((file) =>
      specifiers(readFileSync(file, "utf8"))
        .filter((spec) => spec.startsWith(".") && inside(resolve(dirname(file), spec), TESTS_DIR))
        .map((spec) => `${relative(REPO_ROOT, file)}: ${spec} (import it as ${PACKAGE}/<module>)`),
    );
    assert.deepEqual(offending, [], offending.join("\n"));
  });

  it("no workspace imports another workspace's files by a relative path", () => {
    // This file's own scanner examples are text, not imports.
    const files = sourceFiles(REPO_ROOT).filter((file) => file !== join(TESTS_DIR, "support-imports.test.ts"));
    const offending = files.flatMap((file) =>
      specifiers(readFileSync(file, "utf8"))
        .filter((spec) => spec.startsWith(".") && manifestOf(resolve(dirname(file), spec)) !== manifestOf(file))
        .map((spec) => `${relative(REPO_ROOT, file)}: ${spec} (import the other workspace by its package name)`),
    );
    assert.deepEqual(offending, [], offending.join("\n"));
  });

  it("every workspace importing the support by name lists it among its dependencies", () => {
    const users = outside.filter((file) =>
      specifiers(readFileSync(file, "utf8")).some((spec) => spec.startsWith(`${PACKAGE}/`)),
    );
    assert.ok(users.length > 0, "nothing imports the test support by name");
    const undeclared = [...new Set(users.map(manifestOf))].filter((manifest) => {
      const { dependencies, devDependencies } = JSON.parse(readFileSync(manifest, "utf8"));
      return !(PACKAGE in { ...dependencies, ...devDependencies });
    });
    assert.deepEqual(undeclared.map((manifest) => relative(REPO_ROOT, manifest)), []);
  });

  it("the scanner finds every form of import", () => {
    const text = [
      'import { a } from "../../tests/src/fixtures.js";',
      "import type { B } from '../tests/src/relayer.js';",
      "import {\n  c,\n} from \"../../tests/src/marketplace.js\";",
      'export * from "./x.js";',
      'import "../../tests/src/localnet.js";',
      'const d = await import("../../tests/src/run.js");',
      'const e = require("../tests/src/rpc-proxy.js");',
      "// a comment naming tests/src/fixtures.ts is not an import",
    ].join("\n");
    assert.deepEqual(specifiers(text), [
      "../../tests/src/fixtures.js",
      "../tests/src/relayer.js",
      "../../tests/src/marketplace.js",
      "./x.js",
      "../../tests/src/localnet.js",
      "../../tests/src/run.js",
      "../tests/src/rpc-proxy.js",
    ]);
  });
});
