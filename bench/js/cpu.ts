// CPU time of the processes a benchmark runs, read from /proc: what a figure costs each of them,
// and whether the machine's cores, rather than any one process, are what bounds it.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";

/** CPU seconds a process used so far (user + system), from /proc. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

export function pidsOf(name: string): number[] {
  const found = spawnSync("pgrep", ["-x", name], { encoding: "utf8" });
  return found.stdout.split("\n").filter(Boolean).map(Number);
}

/** Named groups of processes, listed again at every reading (PostgreSQL forks a backend per connection). */
export type ProcessGroups = [string, () => number[]][];

/** CPU seconds each group has used so far, per process. */
export function readCpu(groups: ProcessGroups): Map<number, number>[] {
  return groups.map(([, pids]) => new Map(pids().map((pid) => [pid, cpuSeconds(pid)])));
}

/** CPU seconds each group used between two readings; a process new since `before` counts from zero. */
export function cpuBetween(before: Map<number, number>[], after: Map<number, number>[]): number[] {
  return after.map((now, i) => [...now].reduce((sum, [pid, seconds]) => sum + seconds - (before[i]!.get(pid) ?? 0), 0));
}

/** CPU seconds of the whole machine so far (every core, idle excluded), from /proc/stat. */
export function machineBusySeconds(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal …: busy is all but idle and iowait.
  const busy = fields.reduce((sum, value) => sum + value, 0) - fields[3]! - fields[4]!;
  return busy / 100;
}

export const CORES = cpus().length;
