// Builds the npm workspaces once each, dependencies first, as many at a time as there are cores.
// The order comes from each package.json's dependencies on other workspaces, so a new dependency
// needs no edit here. With arguments (workspace folders or package names), builds those and what
// they depend on:
//   node scripts/build-ts.mjs                 every workspace
//   node scripts/build-ts.mjs relayer app     the relayer, the dashboard and their dependencies
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Every workspace: its folder, name, build script (if any) and the workspaces it depends on. */
function workspaces() {
  const patterns = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).workspaces;
  const dirs = [];
  for (const pattern of patterns) {
    if (pattern.endsWith("/*")) {
      const parent = join(root, pattern.slice(0, -2));
      // Sorted, so that independent workspaces start in the same order on every machine.
      const listed = existsSync(parent) ? readdirSync(parent).sort() : [];
      for (const name of listed) if (existsSync(join(parent, name, "package.json"))) dirs.push(join(parent, name));
    } else if (existsSync(join(root, pattern, "package.json"))) {
      dirs.push(join(root, pattern));
    }
  }
  const packages = dirs.map((dir) => {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const deps = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies });
    return { dir, name: manifest.name, build: manifest.scripts?.build !== undefined, deps };
  });
  const names = new Set(packages.map((p) => p.name));
  for (const p of packages) p.deps = p.deps.filter((dep) => names.has(dep));
  return packages;
}

/** `wanted` and everything it depends on, by name. */
function closure(packages, wanted) {
  const byName = new Map(packages.map((p) => [p.name, p]));
  const out = new Set();
  const visit = (name) => {
    if (out.has(name)) return;
    out.add(name);
    for (const dep of byName.get(name).deps) visit(dep);
  };
  for (const name of wanted) visit(name);
  return packages.filter((p) => out.has(p.name));
}

function run(p) {
  return new Promise((done, fail) => {
    const started = Date.now();
    const child = spawn("npm", ["run", "build", "--silent"], { cwd: p.dir, stdio: "inherit" });
    child.on("error", fail);
    child.on("exit", (code) => {
      if (code === 0) {
        console.log(`built ${relative(root, p.dir)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        done();
      } else fail(new Error(`${relative(root, p.dir)}: npm run build exited with ${code}`));
    });
  });
}

async function main() {
  const all = workspaces();
  const args = process.argv.slice(2);
  const wanted = args.length === 0 ? all.map((p) => p.name) : args.map((arg) => {
    const found = all.find((p) => p.name === arg || resolve(p.dir) === resolve(root, arg) || resolve(p.dir) === resolve(arg));
    if (!found) throw new Error(`no workspace ${arg}`);
    return found.name;
  });
  const todo = new Map(closure(all, wanted).map((p) => [p.name, p]));
  const done = new Set();
  const running = new Map();
  const slots = Math.max(1, cpus().length);
  while (todo.size > 0 || running.size > 0) {
    // A workspace without a build (the end-to-end tests) is done as soon as its dependencies are,
    // which can free workspaces already passed over in this scan: scan again until nothing moves.
    let freed = true;
    while (freed) {
      freed = false;
      for (const p of [...todo.values()]) {
        if (running.size >= slots) break;
        if (!p.deps.every((dep) => done.has(dep))) continue;
        todo.delete(p.name);
        if (!p.build) {
          done.add(p.name);
          freed = true;
          continue;
        }
        running.set(p.name, run(p).then(() => p.name));
      }
    }
    if (running.size === 0) {
      if (todo.size > 0) throw new Error(`a dependency cycle among ${[...todo.keys()].join(", ")}`);
      break;
    }
    const finished = await Promise.race(running.values());
    running.delete(finished);
    done.add(finished);
  }
}

main().catch((error) => {
  console.error(error.message ?? error);
  process.exit(1);
});
