import type { CreatorAgent, DailyEarning } from "../data/my-agents.js";
import { BarChart } from "./BarChart.js";
import { UptimeChart } from "./UptimeChart.js";
import { latencyText, successText } from "./figures.js";
import { usdcFigure, usdcText } from "./money.js";

const WINDOW_LABEL: Record<string, string> = { H24: "24 h", D7: "7 d", D30: "30 d" };

/** An agent's record from the indexer: 90 days of status, success and latency, refunds, earnings. */
export function AgentFigures({ agent, earnings }: { agent: CreatorAgent; earnings: DailyEarning[] | null }) {
  const windows = agent.uptime.filter((w) => w.window in WINDOW_LABEL);
  const month = agent.uptime.find((w) => w.window === "D30");
  const refunds = month?.refunded;
  return (
    <div className="details">
      <UptimeChart daily={agent.daily} />
      <div className="table-wrap" tabIndex={0} aria-label="Success and latency">
        <table data-testid="agent-windows" className="stack-narrow">
          <thead>
            <tr>
              <th scope="col">Window</th>
              <th scope="col" className="num">Executions</th>
              <th scope="col" className="num">Success</th>
              <th scope="col" className="num">Latency p50</th>
              <th scope="col" className="num">p95</th>
            </tr>
          </thead>
          <tbody>
            {windows.map((w) => (
              <tr key={w.window}>
                <th scope="row">{WINDOW_LABEL[w.window]}</th>
                <td className="num" data-label="Executions">{w.executions}</td>
                <td className="num" data-label="Success">{successText(w.successRate)}</td>
                <td className="num" data-label="Latency p50">{latencyText(w.latencySeconds.p50)}</td>
                <td className="num" data-label="Latency p95">{latencyText(w.latencySeconds.p95)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {refunds !== undefined && (
        <p className="small" data-testid="refunds">
          Refunds over 30 days: {refunds.total === 0 ? "none" : `${refunds.total} — ${refunds.timeout} timeout, ${refunds.creatorError} service error, ${refunds.invalidSignature} bad signature, ${refunds.outputInvalid} invalid output, ${refunds.relayerError} relayer error (not counted against you)`}
        </p>
      )}
      {earnings !== null && (
        <BarChart
          testId="chart-earnings"
          title="Earnings (30 days)"
          unit="USDC"
          timeAxis="day"
          format={usdcFigure}
          bars={earnings.map((b) => {
            const day = new Date(b.start).toLocaleDateString([], { day: "numeric", month: "short" });
            return { key: b.start, label: day, tick: day, value: Number(b.earned.usdc), text: `${usdcText(b.earned.usdc)} from ${b.settled} settled` };
          })}
        />
      )}
    </div>
  );
}
