import type { AgentStatus } from "../data/agents.js";

const LABELS: Record<AgentStatus, string> = { OPERATIONAL: "operational", DEGRADED: "degraded", DOWN: "down", NO_DATA: "no data" };

export function StatusBadge({ status }: { status: AgentStatus | null }) {
  const s = status ?? "NO_DATA";
  return <span className={`badge status-${s.toLowerCase()}`}>{LABELS[s]}</span>;
}
