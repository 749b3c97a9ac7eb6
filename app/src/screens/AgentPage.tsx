import { parseUsdc, type AgentCircuit } from "@agent-market/client";

import { useApp } from "../app-context.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { ExplorerLink } from "../components/ExplorerLink.js";
import { listingText } from "../components/listing-status.js";
import { shortId } from "../components/short-id.js";
import { priceText } from "../components/price.js";
import { RunForm } from "../components/RunForm.js";
import { latencyText, successText } from "../components/figures.js";
import { StatusBadge } from "../components/StatusBadge.js";
import { TopUpToMinimum } from "../components/TopUpToMinimum.js";
import { Empty, Loading } from "../components/Status.js";
import { UptimeChart } from "../components/UptimeChart.js";
import { Usdc } from "../components/Usdc.js";
import { agentChain, getAgent } from "../data/agents.js";
import { executionAmountUsdc } from "../data/execution-amount.js";
import { agentChanged, useLive } from "../data/live.js";
import { useLoad } from "../data/use-load.js";

// An open circuit is the relayer refusing calls its creator keeps failing, before anyone pays.
function circuitText(circuit: AgentCircuit): string {
  switch (circuit.state) {
    case "closed":
      return "closed: taking calls";
    case "open":
      return `open: too many failed calls lately; no calls until ${new Date(circuit.retry_at!).toLocaleTimeString()}`;
    case "half_open":
      return "half-open: the next call decides whether it takes calls again";
  }
}

const WINDOWS = { H1: "1 hour", H24: "24 hours", D7: "7 days", D30: "30 days" } as const;


export function AgentPage({ agentId, onBack }: { agentId: string; onBack: () => void }) {
  const { config, session } = useApp();
  const [agent, reload] = useLoad(() => getAgent(agentId), [agentId]);
  const [chain, reloadChain] = useLoad(() => agentChain(config.indexer_graphql_url, agentId), [agentId]);
  useLive(config.indexer_graphql_url, [agentChanged(agentId)], reloadChain);
  // The indexer's figure follows the chain live (a slash, a top-up); the listing's is a read of a moment.
  const collateral =
    chain.state === "ready" && chain.value !== null ? chain.value.collateral.usdc : agent.state === "ready" ? agent.value.collateral_usdc : null;

  return (
    <>
      <p>
        <a
          href="#/marketplace"
          onClick={(e) => {
            e.preventDefault();
            onBack();
          }}
        >
          ← Marketplace
        </a>
      </p>
      {agent.state === "loading" && <Loading what="the agent" />}
      {agent.state === "error" && <ErrorNotice error={agent.error} onRetry={reload} />}
      {agent.state === "ready" && (
        <>
          <h1>
            {agent.value.name} <StatusBadge status={chain.state === "ready" ? chain.value?.status ?? null : null} retired={agent.value.status === "retired"} />
          </h1>
          <p>{agent.value.description}</p>
          <p className="tags">
            {agent.value.tags.map((t) => (
              <span key={t} className="tag">
                {t}
              </span>
            ))}
          </p>
          <dl className="pairs">
            <dt>Price</dt>
            <dd>{priceText(agent.value.pricing)}</dd>
            <dt>Listing</dt>
            <dd data-testid="listing-status">{listingText(agent.value)}</dd>
            {/* The breaker guards calls a listing takes: a paused or retired one takes none, and its
                status above says why. */}
            {agent.value.status === "active" && (
              <>
                <dt>Circuit breaker</dt>
                <dd data-testid="circuit">{circuitText(agent.value.circuit)}</dd>
              </>
            )}
            <dt>Longest run</dt>
            <dd>{agent.value.max_execution_secs} s</dd>
            <dt>Collateral</dt>
            <dd>
              <Usdc amount={collateral!} testId="agent-collateral" />
            </dd>
            <dt>Agent account</dt>
            <dd className="mono small">{agent.value.id}</dd>
          </dl>
          {/* Only its creator can top it up; a retired agent is never listed again. */}
          {agent.value.creator === session.address && agent.value.status !== "retired" && (
            <TopUpToMinimum
              address={agent.value.id}
              name={agent.value.name}
              collateralUsdc={parseUsdc(collateral!)}
              minimumUsdc={parseUsdc(agent.value.minimum_collateral_usdc)}
              after={() => {
                reload();
                reloadChain();
              }}
            />
          )}
          <div className="two-col">
            <RunForm agent={agent.value} onListingChanged={reload} />
            <section className="card" aria-labelledby="status-title">
              <h2 id="status-title">On-chain record</h2>
              {chain.state === "loading" && <Loading what="the chain's record" />}
              {chain.state === "error" && <ErrorNotice error={chain.error} onRetry={reloadChain} />}
              {chain.state === "ready" && chain.value === null && <Empty>The indexer has no execution of this agent yet.</Empty>}
              {chain.state === "ready" && chain.value !== null && (
                <>
                  <UptimeChart daily={chain.value.daily} />
                  <div className="table-wrap">
                  <table className="stack-narrow" data-testid="uptime-windows">
                    <thead>
                      <tr>
                        <th scope="col">Window</th>
                        <th scope="col" className="num">Executions</th>
                        <th scope="col" className="num">Success</th>
                        <th scope="col" className="num">Latency p50 / p95</th>
                      </tr>
                    </thead>
                    <tbody>
                      {chain.value.uptime.map((w) => (
                        <tr key={w.window}>
                          <th scope="row">{WINDOWS[w.window]}</th>
                          <td className="num" data-label="Executions">{w.executions}</td>
                          <td className="num" data-label="Success">{successText(w.successRate)}</td>
                          <td className="num" data-label="Latency p50 / p95">
                            {latencyText(w.latencySeconds.p50)} / {latencyText(w.latencySeconds.p95)}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                  </div>
                  <h3>Recent executions</h3>
                  {chain.value.executions.edges.length === 0 ? (
                    <Empty>None yet.</Empty>
                  ) : (
                    <ul className="plain">
                      {chain.value.executions.edges.map(({ node }) => (
                        <li key={node.id} data-testid="agent-execution-row">
                          <span className={`badge badge-${node.state.toLowerCase()}`}>{node.state.toLowerCase()}</span>{" "}
                          <span className="mono" title={node.id}>
                            {shortId(node.id)}
                          </span>{" "}
                          <Usdc amount={executionAmountUsdc(node)} />{" "}
                          {/* Executions settled together share their transaction: the id tells them apart. */}
                          {node.closeTransaction && <ExplorerLink signature={node.closeTransaction.signature} />}
                        </li>
                      ))}
                    </ul>
                  )}
                </>
              )}
            </section>
          </div>
          <details className="card">
            <summary>Input and output schemas</summary>
            <h3>Input</h3>
            <pre>{JSON.stringify(agent.value.input_schema, null, 2)}</pre>
            <h3>Output</h3>
            <pre>{JSON.stringify(agent.value.output_schema, null, 2)}</pre>
          </details>
        </>
      )}
    </>
  );
}
