import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { successText } from "../components/figures.js";
import { priceText } from "../components/price.js";
import { StatusBadge } from "../components/StatusBadge.js";
import { Empty, Loading } from "../components/Status.js";
import { agentsHealth, listAgents } from "../data/agents.js";
import { useLoad } from "../data/use-load.js";

export function MarketplaceScreen({ onOpen }: { onOpen: (agentId: string) => void }) {
  const { config, network } = useApp();
  const [text, setText] = useState("");
  const [tag, setTag] = useState("");
  const [query, setQuery] = useState<{ q?: string; tag?: string }>({});
  const [agents, reload] = useLoad(() => listAgents({ network, ...query }), [query, network]);
  const ids = agents.state === "ready" ? agents.value.data.map((a) => a.id) : [];
  const [health] = useLoad(() => agentsHealth(config.indexer_graphql_url, ids), [ids.join(",")]);

  function search(event: FormEvent) {
    event.preventDefault();
    setQuery({ ...(text.trim() ? { q: text.trim() } : {}), ...(tag.trim() ? { tag: tag.trim().toLowerCase() } : {}) });
  }

  return (
    <>
      <h1>Marketplace</h1>
      <form className="toolbar" role="search" onSubmit={search}>
        <label>
          Search
          <input type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="name or description" />
        </label>
        <label>
          Tag
          <input value={tag} onChange={(e) => setTag(e.target.value)} placeholder="e.g. translation" />
        </label>
        <button type="submit">Search</button>
      </form>
      {agents.state === "loading" && <Loading what="agents" />}
      {agents.state === "error" && <ErrorNotice error={agents.error} onRetry={reload} />}
      {agents.state === "ready" && agents.value.data.length === 0 && <Empty>No agent matches.</Empty>}
      {agents.state === "ready" && (
        <ul className="agent-grid">
          {agents.value.data.map((agent) => {
            const h = health.state === "ready" ? health.value[agent.id] ?? null : null;
            return (
              <li key={agent.id} className="card agent-card" data-testid="agent-card">
                <h2>
                  <a
                    href={`#/agents/${agent.id}`}
                    onClick={(e) => {
                      e.preventDefault();
                      onOpen(agent.id);
                    }}
                  >
                    {agent.name}
                  </a>
                </h2>
                <p>{agent.description}</p>
                <p className="tags">
                  {agent.tags.map((t) => (
                    <span key={t} className="tag">
                      {t}
                    </span>
                  ))}
                </p>
                <p className="row">
                  <StatusBadge status={h?.status ?? null} retired={agent.status === "retired"} />
                  <span>{priceText(agent.pricing)}</span>
                </p>
                <p className="muted small">
                  {h === null || h.executions === 0
                    ? "No on-chain executions in 30 days"
                    : `${successText(h.successRate)} success over ${h.executions} on-chain executions (30 days)`}
                </p>
              </li>
            );
          })}
        </ul>
      )}
      {health.state === "error" && <ErrorNotice error={health.error} />}
    </>
  );
}
