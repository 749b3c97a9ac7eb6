import type { AgentStatus } from "../data/agents.js";

const LABELS: Record<AgentStatus, string> = { OPERATIONAL: "operational", DEGRADED: "degraded", DOWN: "down", NO_DATA: "new: no executions yet" };

/** The indexer's status of an agent; a retired agent takes no executions, whatever its record says. */
export function StatusBadge({ status, retired = false }: { status: AgentStatus | null; retired?: boolean }) {
  if (retired) return <span className="badge status-retired">retired</span>;
  const s = status ?? "NO_DATA";
  return <span className={`badge status-${s.toLowerCase()}`}>{LABELS[s]}</span>;
}
