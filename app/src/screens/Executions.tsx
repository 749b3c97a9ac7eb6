import { Fragment, useRef, useState } from "react";

import { useApp } from "../app-context.js";
import { agentChoices, agentLabel } from "../components/agent-choices.js";
import { AgentName } from "../components/AgentName.js";
import { AgentPicker } from "../components/AgentPicker.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { ExecutionDetails } from "../components/ExecutionDetails.js";
import { noMatch, type AskedFor } from "../components/no-match.js";
import { NoMatch } from "../components/NoMatch.js";
import { Empty, Loading } from "../components/Status.js";
import { Usdc } from "../components/Usdc.js";
import { fetchExecutions, type ChainExecution, type ChainState, type ExecutionFilter } from "../data/executions.js";
import { paidBy, useLive } from "../data/live.js";
import { useLoad } from "../data/use-load.js";
import { WEB_RUNS_LABEL, webRunKeyId } from "../data/web-runs.js";
import { useWalletAgents } from "../data/wallet-agents.js";
import { executionAmountUsdc } from "../data/execution-amount.js";
import { timeText } from "../components/time.js";
import { shortId } from "../components/short-id.js";

export function ExecutionsScreen() {
  const { session, config, network } = useApp();
  const [filter, setFilter] = useState<ExecutionFilter>({});
  const [pages, setPages] = useState<ChainExecution[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const [keys, reloadKeys] = useLoad(async () => (await session.keys.list({ limit: 100 })).data, [session]);
  const [webKey] = useLoad(() => webRunKeyId(session.address, network), [session, network]);
  const webKeyId = webKey.state === "ready" ? webKey.value : null;
  const keyNames = new Map(keys.state === "ready" ? keys.value.map((k) => [k.id, `${k.name} (…${k.last4})`]) : []);
  const paidWith = (id: string | null) => (id === null ? "" : id === webKeyId ? WEB_RUNS_LABEL : (keyNames.get(id) ?? shortId(id)));
  const [agents, refreshAgents] = useWalletAgents(config.indexer_graphql_url, session.address);
  const choices = agents.state === "ready" ? agentChoices(agents.value.agents) : [];
  const agentSelect = useRef<HTMLSelectElement>(null);
  const [page, reload] = useLoad(async () => {
    setPages([]);
    return fetchExecutions(config.indexer_graphql_url, { ...filter, payer: session.address });
  }, [filter, session]);
  const [next, setNext] = useState<string | null | undefined>(undefined);
  // An execution paid by this wallet, made here, with curl or anywhere: shown as the chain records it.
  useLive(config.indexer_graphql_url, [paidBy(session.address)], () => {
    setNext(undefined);
    reload();
    reloadKeys();
    refreshAgents();
  });
  const [moreError, setMoreError] = useState<unknown>(null);

  const first = page.state === "ready" ? page.value.executions : [];
  const rows = [...first, ...pages];
  const cursor = next === undefined ? (page.state === "ready" ? page.value.next : null) : next;
  const filtered = filter.apiKeyId !== undefined || filter.agent !== undefined || filter.state !== undefined;
  const askedFor: AskedFor = {
    ...(filter.agent === undefined ? {} : { agent: agentLabel(choices, filter.agent) }),
    ...(filter.apiKeyId === undefined ? {} : { key: filter.apiKeyId === webKeyId ? "web runs" : { label: paidWith(filter.apiKeyId) } }),
    ...(filter.state === undefined ? {} : { state: filter.state }),
  };

  return (
    <>
      <h1>Executions</h1>
      <form className="toolbar" aria-label="Filter executions" onSubmit={(e) => e.preventDefault()}>
        <label>
          Key
          <select value={filter.apiKeyId ?? ""} onChange={(e) => { setNext(undefined); setFilter({ ...filter, apiKeyId: e.target.value || undefined }); }}>
            <option value="">all keys and web runs</option>
            {webKeyId !== null && <option value={webKeyId}>{WEB_RUNS_LABEL}</option>}
            {keys.state === "ready" &&
              keys.value.map((k) => (
                <option key={k.id} value={k.id}>
                  {k.name} (…{k.last4})
                </option>
              ))}
          </select>
        </label>
        <AgentPicker
          choices={choices}
          partial={agents.state === "ready" && agents.value.partial}
          value={filter.agent ?? ""}
          onChange={(agent) => { setNext(undefined); setFilter({ ...filter, agent: agent || undefined }); }}
          none="All agents"
          selectRef={agentSelect}
        />
        <label>
          State
          <select value={filter.state ?? ""} onChange={(e) => { setNext(undefined); setFilter({ ...filter, state: (e.target.value || undefined) as ChainState | undefined }); }}>
            <option value="">any</option>
            <option value="OPEN">open</option>
            <option value="SETTLED">settled</option>
            <option value="REFUNDED">refunded</option>
            <option value="RECLAIMED">reclaimed</option>
          </select>
        </label>
      </form>
      {page.state === "loading" && <Loading what="executions" />}
      {page.state === "error" && <ErrorNotice error={page.error} onRetry={reload} />}
      {page.state === "ready" && rows.length === 0 && filtered && (
        <NoMatch
          text={noMatch(askedFor)}
          clear="Show all executions"
          onClear={() => {
            setNext(undefined);
            setFilter({});
            // The button leaves with the empty result: focus goes back to the filters.
            agentSelect.current?.focus();
          }}
        />
      )}
      {page.state === "ready" && rows.length === 0 && !filtered && (
        <Empty>
          No executions yet. Run an agent from the <a href="#/marketplace">Marketplace</a>, or call one with an API key.
        </Empty>
      )}
      {rows.length > 0 && (
        <div className="table-wrap">
          <table data-testid="executions-table" className="stack-narrow">
            <thead>
              <tr>
                <th scope="col">Execution</th>
                <th scope="col">Agent</th>
                <th scope="col">Paid with</th>
                <th scope="col">State</th>
                <th scope="col" className="num">Amount</th>
                <th scope="col">Opened</th>
                <th scope="col">
                  <span className="visually-hidden">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((x) => (
                <Fragment key={x.id}>
                  <tr data-testid="execution-row">
                    <th scope="row" className="mono">
                      {shortId(x.id)}
                    </th>
                    <td data-label="Agent">
                      <AgentName address={x.agent} />
                    </td>
                    <td data-testid="execution-paid-with" data-label="Paid with">{paidWith(x.apiKeyId)}</td>
                    <td data-label="State">
                      <span className={`badge badge-${x.state.toLowerCase()}`}>{x.state.toLowerCase()}</span>
                    </td>
                    <td className="num" data-label="Amount">
                      <Usdc amount={executionAmountUsdc(x)} testId="execution-amount" />
                    </td>
                    <td data-label="Opened">{x.openedAt === null ? "" : timeText(x.openedAt)}</td>
                    <td>
                      <button type="button" aria-expanded={open === x.id} onClick={() => setOpen(open === x.id ? null : x.id)}>
                        {open === x.id ? "Hide" : "Details"}
                      </button>
                    </td>
                  </tr>
                  {open === x.id && (
                    <tr>
                      <td colSpan={7}>
                        <ExecutionDetails execution={x} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor !== null && page.state === "ready" && (
        <button
          type="button"
          onClick={() => {
            setMoreError(null);
            void fetchExecutions(config.indexer_graphql_url, { ...filter, payer: session.address }, cursor).then((more) => {
              setPages((p) => [...p, ...more.executions]);
              setNext(more.next);
            }, setMoreError);
          }}
        >
          Load more
        </button>
      )}
      {moreError !== null && <ErrorNotice error={moreError} />}
    </>
  );
}
