// Runs the local marketplace's processes and keeps it whole: a child that exits unexpectedly is
// reported with its last lines and restarted with backoff, or, where a restart is not safe (or
// keeps failing), every child is stopped and the supervisor reports why, so a marketplace is never
// left half alive. Stopping goes in the reverse order of starting, each child within its bound.
//
// Children get a process group of their own: a terminal's Ctrl-C reaches only the supervisor,
// which then stops them in order (the relayer before the database it writes to). Their PIDs are
// kept in a file, so the next start stops the leftovers of a supervisor that was killed outright.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run as this user and group (PostgreSQL, started by root). */
  uid?: number;
  gid?: number;
  /** Resolves once the child serves; it is called at every start and restart. */
  ready(child: ChildProcess): Promise<void>;
  /** How long `ready` may take before the start counts as failed. */
  ready_timeout_ms?: number;
  /**
   * An unexpected exit restarts the child, or, when a restart is not safe, stops the whole
   * marketplace with `reason`.
   */
  on_exit: "restart" | { stop: string };
  /** The signal that asks the child to stop cleanly (SIGTERM unless said). */
  stop_signal?: NodeJS.Signals;
  /** After this, a child still running is killed (SIGKILL). */
  stop_timeout_ms?: number;
  /** Copy the child's output to the supervisor's stdout (it always goes to its log file). */
  echo?: boolean;
}

export interface SupervisorOptions {
  log(line: string): void;
  /** `<name>.log` of each child, appended to across restarts. */
  log_dir: string;
  /** Where the children's PIDs are kept, for the next start to stop leftovers. */
  pid_file: string;
  /** Called once when the supervisor gives up on a child, after every child has stopped. */
  on_fatal(reason: string): void;
  /** Delay before the first restart, doubled at each failure in a row up to `max_backoff_ms`. */
  backoff_ms?: number;
  max_backoff_ms?: number;
  /** More unexpected exits than this within `restart_window_ms` stops the marketplace. */
  max_restarts?: number;
  restart_window_ms?: number;
}

export interface Supervised {
  readonly name: string;
  /** The running process (a new one after each restart). */
  readonly process: ChildProcess;
  readonly restarts: number;
  /** The child's last lines of output. */
  tail(): string[];
}

const TAIL_LINES = 30;

class Child implements Supervised {
  process!: ChildProcess;
  restarts = 0;
  exits_ms: number[] = [];
  lines: string[] = [];
  log: WriteStream;
  /** Set while a start (or restart) is under way, so stop() can wait for it. */
  starting?: Promise<void>;

  constructor(readonly spec: ChildSpec, log_dir: string) {
    this.log = createWriteStream(join(log_dir, `${spec.name}.log`), { flags: "a" });
  }

  get name(): string {
    return this.spec.name;
  }

  tail(): string[] {
    return [...this.lines];
  }
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function exited(child: ChildProcess): Promise<void> {
  return alive(child) ? new Promise((resolve) => child.once("exit", () => resolve())) : Promise.resolve();
}

function describeExit(child: ChildProcess): string {
  return child.signalCode !== null ? `signal ${child.signalCode}` : `code ${child.exitCode}`;
}

/** Signals a child's whole process group (a PostgreSQL server and its backends). */
function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

export class Supervisor {
  private readonly children: Child[] = [];
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private fatal?: string;
  private readonly backoff_ms: number;
  private readonly max_backoff_ms: number;
  private readonly max_restarts: number;
  private readonly restart_window_ms: number;

  constructor(private readonly options: SupervisorOptions) {
    this.backoff_ms = options.backoff_ms ?? 500;
    this.max_backoff_ms = options.max_backoff_ms ?? 10_000;
    this.max_restarts = options.max_restarts ?? 5;
    this.restart_window_ms = options.restart_window_ms ?? 60_000;
    mkdirSync(options.log_dir, { recursive: true });
  }

  /** Why the supervisor gave up, once it has. */
  get failure(): string | undefined {
    return this.fatal;
  }

  /**
   * Stops what a killed supervisor left running: the processes its PID file names that still run
   * the same command. Returns their names.
   */
  async stopLeftovers(): Promise<string[]> {
    if (!existsSync(this.options.pid_file)) return [];
    let recorded: { name: string; pid: number; command: string; stop_signal: NodeJS.Signals }[] = [];
    try {
      recorded = JSON.parse(readFileSync(this.options.pid_file, "utf8")) as typeof recorded;
    } catch {
      // unreadable: nothing to trust in it
    }
    const stopped: string[] = [];
    // The last started first, as in a stop: the relayer before the database it writes to.
    for (const leftover of recorded.reverse()) {
      if (!runsCommand(leftover.pid, leftover.command)) continue;
      this.options.log(`stopping ${leftover.name} (PID ${leftover.pid}), left running by an earlier start that was killed`);
      signalGroup(leftover.pid, leftover.stop_signal);
      const deadline = Date.now() + 15_000;
      while (runsCommand(leftover.pid, leftover.command) && Date.now() < deadline) await sleep(100);
      if (runsCommand(leftover.pid, leftover.command)) signalGroup(leftover.pid, "SIGKILL");
      stopped.push(leftover.name);
    }
    rmSync(this.options.pid_file, { force: true });
    return stopped;
  }

  /** Starts `spec` and waits until it is ready; a child that fails to start is stopped. */
  async start(spec: ChildSpec): Promise<Supervised> {
    if (this.stopping) throw new Error(`not starting ${spec.name}: the marketplace is stopping`);
    const child = new Child(spec, this.options.log_dir);
    this.children.push(child);
    child.starting = this.launch(child);
    try {
      await child.starting;
    } finally {
      child.starting = undefined;
    }
    return child;
  }

  private async launch(child: Child): Promise<void> {
    const { spec } = child;
    const process_ = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      ...(spec.uid === undefined ? {} : { uid: spec.uid }),
      ...(spec.gid === undefined ? {} : { gid: spec.gid }),
    });
    child.process = process_;
    const onLine = (line: string) => {
      child.lines.push(line);
      if (child.lines.length > TAIL_LINES) child.lines.shift();
      child.log.write(`${line}\n`);
      if (spec.echo) process.stdout.write(`${line}\n`);
    };
    createInterface({ input: process_.stdout! }).on("line", onLine);
    createInterface({ input: process_.stderr! }).on("line", onLine);
    const spawned = new Promise<void>((resolve, reject) => {
      process_.once("spawn", () => resolve());
      process_.once("error", reject);
    });
    process_.once("exit", () => void this.onExit(child, process_));
    await spawned;
    this.savePids();
    const timeout_ms = spec.ready_timeout_ms ?? 60_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        spec.ready(process_),
        exited(process_).then(() => {
          throw new Error(`${spec.name} exited (${describeExit(process_)}) while starting`);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${spec.name} was not ready within ${timeout_ms / 1000} s`)), timeout_ms);
        }),
      ]);
    } catch (error) {
      signalGroup(process_.pid, "SIGKILL");
      await exited(process_);
      throw new Error(`${(error as Error).message}; its last lines:\n${indent(child.tail())}`);
    } finally {
      clearTimeout(timer);
    }
  }

  private async onExit(child: Child, process_: ChildProcess): Promise<void> {
    // Only the current process of a child that was up counts: a start that failed is the
    // starter's to report, and a stop is expected.
    if (this.stopping || child.process !== process_ || child.starting) return;
    const how = describeExit(process_);
    const tail = indent(child.tail());
    if (typeof child.spec.on_exit === "object") {
      return this.giveUp(`${child.name} exited unexpectedly (${how}), and ${child.spec.on_exit.stop}; its last lines:\n${tail}`);
    }
    const now = Date.now();
    child.exits_ms = [...child.exits_ms.filter((at) => now - at < this.restart_window_ms), now];
    if (child.exits_ms.length > this.max_restarts) {
      return this.giveUp(
        `${child.name} exited ${child.exits_ms.length} times within ${this.restart_window_ms / 1000} s (last: ${how}); its last lines:\n${tail}`,
      );
    }
    for (let attempt = child.exits_ms.length; ; attempt += 1) {
      const delay_ms = Math.min(this.backoff_ms * 2 ** (attempt - 1), this.max_backoff_ms);
      this.options.log(`${child.name} exited unexpectedly (${how}); restarting it in ${delay_ms} ms. Its last lines:\n${tail}`);
      await sleep(delay_ms);
      if (this.stopping) return;
      child.starting = this.launch(child);
      try {
        await child.starting;
        child.restarts += 1;
        this.options.log(`${child.name} restarted (PID ${child.process.pid})`);
        return;
      } catch (error) {
        child.exits_ms.push(Date.now());
        if (child.exits_ms.length > this.max_restarts) {
          return this.giveUp(`${child.name} could not be restarted: ${(error as Error).message}`);
        }
        this.options.log(`restarting ${child.name} failed: ${(error as Error).message}`);
      } finally {
        child.starting = undefined;
      }
    }
  }

  private async giveUp(reason: string): Promise<void> {
    if (this.fatal !== undefined || this.stopping) return;
    this.fatal = reason;
    this.options.log(`${reason}\nstopping the marketplace`);
    await this.stop();
    this.options.on_fatal(reason);
  }

  /**
   * Stops every child, the last started first, each within its bound. Callers that ask while a
   * stop is under way (a Ctrl-C during start, say) wait for that one: a second stop signal would
   * tell a relayer to exit at once instead of handing its executions over.
   */
  stop(): Promise<void> {
    this.stopped ??= this.stopChildren();
    return this.stopped;
  }

  private async stopChildren(): Promise<void> {
    this.stopping = true;
    for (const child of [...this.children].reverse()) {
      await child.starting?.catch(() => undefined);
      const process_ = child.process;
      if (process_ && alive(process_)) {
        const bound_ms = child.spec.stop_timeout_ms ?? 10_000;
        signalGroup(process_.pid, child.spec.stop_signal ?? "SIGTERM");
        const timer = setTimeout(() => {
          this.options.log(`${child.name} did not stop within ${bound_ms / 1000} s: killing it`);
          signalGroup(process_.pid, "SIGKILL");
        }, bound_ms);
        await exited(process_);
        clearTimeout(timer);
      }
      child.log.end();
    }
    rmSync(this.options.pid_file, { force: true });
  }

  /** Kills every child at once (a second Ctrl-C). */
  kill(): void {
    this.stopping = true;
    for (const child of this.children) if (child.process && alive(child.process)) signalGroup(child.process.pid, "SIGKILL");
    rmSync(this.options.pid_file, { force: true });
  }

  private savePids(): void {
    const running = this.children
      .filter((child) => child.process?.pid !== undefined && alive(child.process))
      .map((child) => ({
        name: child.name,
        pid: child.process.pid!,
        command: child.spec.command,
        stop_signal: child.spec.stop_signal ?? "SIGTERM",
      }));
    writeFileSync(this.options.pid_file, JSON.stringify(running, null, 2));
  }
}

/** Whether `pid` is alive and runs `command` (a PID is reused once its process is gone). */
function runsCommand(pid: number, command: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
    return cmdline === command;
  } catch {
    // No /proc (macOS): the PID file is removed on every clean stop, so trust a live PID.
    return true;
  }
}

function indent(lines: string[]): string {
  return lines.length === 0 ? "  (no output)" : lines.map((line) => `  ${line}`).join("\n");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
