import type { AgentChain } from "../data/agents.js";
import { successText } from "./figures.js";

/** Ninety days, one bar each, coloured by the day's status (from on-chain records only). */
export function UptimeChart({ daily }: { daily: AgentChain["daily"] }) {
  return (
    <figure className="uptime" data-testid="uptime-chart">
      <figcaption>Status over 90 days</figcaption>
      <div className="uptime-bars" role="img" aria-label={`${daily.filter((d) => d.status === "OPERATIONAL").length} of ${daily.length} days operational`}>
        {daily.map((d) => (
          <span
            key={d.day}
            className={`uptime-bar status-${d.status.toLowerCase()}`}
            title={`${d.day}: ${d.executions} executions${d.successRate === null ? "" : `, ${successText(d.successRate)} success`}`}
          />
        ))}
      </div>
    </figure>
  );
}
