import type { ApiKey } from "@agent-market/client";
import { useMemo, useRef, useState } from "react";

import { useApp } from "../app-context.js";
import { agentChoices, agentLabel } from "../components/agent-choices.js";
import { AgentPicker } from "../components/AgentPicker.js";
import { BarChart } from "../components/BarChart.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { usdcFigure, usdcText } from "../components/money.js";
import { noMatch, type AskedFor } from "../components/no-match.js";
import { NoMatch } from "../components/NoMatch.js";
import { Empty, Loading } from "../components/Status.js";
import { Usdc } from "../components/Usdc.js";
import { fetchUsage, usageCsv, type Dimension, type Range } from "../data/usage.js";
import { paidBy, useLive } from "../data/live.js";
import { useLoad } from "../data/use-load.js";
import { useWalletAgents } from "../data/wallet-agents.js";
import { WEB_RUNS_LABEL, webRunKeyId } from "../data/web-runs.js";

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The bucket in full, and as the time axis shows it. */
function bucketNames(start: string, range: Range): { label: string; tick: string } {
  const d = new Date(start);
  const day = d.toLocaleDateString([], { day: "numeric", month: "short" });
  if (range !== "24h") return { label: day, tick: day };
  const hour = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  // The axis has room for "10 PM" or "22" five times at 375 px, not for "10:00 PM".
  return { label: `${day}, ${hour}`, tick: d.toLocaleTimeString([], { hour: "numeric" }) };
}

const countFigure = (value: number) => String(value);

export function UsageScreen() {
  const { session, config, network } = useApp();
  const [range, setRange] = useState<Range>("24h");
  const [dimension, setDimension] = useState<Dimension>("PAYER");
  const [subject, setSubject] = useState("");
  const [keys] = useLoad(async () => (await session.keys.list({ limit: 100 })).data, [session]);
  const [webKey] = useLoad(() => webRunKeyId(session.address, network), [session, network]);
  const [agents, refreshAgents, reloadAgents] = useWalletAgents(config.indexer_graphql_url, session.address);
  const choices = agents.state === "ready" ? agentChoices(agents.value.agents) : [];
  const ofSelect = useRef<HTMLSelectElement>(null);
  const effective = dimension === "PAYER" ? session.address : subject;
  const [usage, reload] = useLoad(
    // The range and subject travel with their figures: while others load, the screen keeps
    // showing these, and says which range and subject they are.
    async () => (effective === "" ? null : { ...(await fetchUsage(config.indexer_graphql_url, dimension, effective, range)), range, dimension, subject: effective }),
    [dimension, effective, range],
  );
  // Every execution of this wallet's (with any key, or a web run) moves these figures.
  useLive(config.indexer_graphql_url, [paidBy(session.address)], () => (reload(), refreshAgents()));

  const bars = useMemo(
    () =>
      usage.state === "ready" && usage.value !== null
        ? usage.value.buckets.map((b) => ({ key: b.start, ...bucketNames(b.start, usage.value!.range), value: Number(b.spent.usdc), text: `${b.executions} executions, ${usdcText(b.spent.usdc)}` }))
        : [],
    [usage],
  );
  const countBars = useMemo(
    () =>
      usage.state === "ready" && usage.value !== null
        ? usage.value.buckets.map((b) => ({ key: b.start, ...bucketNames(b.start, usage.value!.range), value: b.executions, text: `${b.executions} executions` }))
        : [],
    [usage],
  );

  const keyList: ApiKey[] = keys.state === "ready" ? keys.value : [];
  // The figures' own range and subject, not the ones just chosen: until their figures arrive, the
  // previous ones stay.
  const shown = usage.state === "ready" ? usage.value : null;
  const timeAxis = (shown?.range ?? range) === "24h" ? "hour, local time" : "day";
  const webKeyId = webKey.state === "ready" ? webKey.value : null;
  const shownKey = keyList.find((k) => k.id === shown?.subject);
  const askedFor: AskedFor =
    shown === null || shown.dimension === "PAYER"
      ? {}
      : shown.dimension === "AGENT"
        ? { agent: agentLabel(choices, shown.subject) }
        : { key: shown.subject === webKeyId ? "web runs" : { label: shownKey === undefined ? shown.subject : `${shownKey.name} (…${shownKey.last4})` } };
  const showWallet = () => {
    setDimension("PAYER");
    setSubject("");
    // The button leaves with the empty figures: focus goes back to what to show.
    ofSelect.current?.focus();
  };
  return (
    <>
      <h1>Usage</h1>
      <div className="toolbar" role="group" aria-label="What to show">
        <fieldset className="segmented">
          <legend className="visually-hidden">Period</legend>
          {(["24h", "7d", "30d"] as const).map((r) => (
            <label key={r}>
              <input type="radio" name="range" value={r} checked={range === r} onChange={() => setRange(r)} />
              {r}
            </label>
          ))}
        </fieldset>
        <label>
          Of
          <select
            ref={ofSelect}
            value={dimension}
            onChange={(e) => {
              setDimension(e.target.value as Dimension);
              setSubject("");
            }}
          >
            <option value="PAYER">this wallet</option>
            <option value="API_KEY">one key, or web runs</option>
            <option value="AGENT">one agent</option>
          </select>
        </label>
        {dimension === "API_KEY" && (
          <label>
            Key
            <select value={subject} onChange={(e) => setSubject(e.target.value)}>
              <option value="">choose a key</option>
              {webKeyId !== null && <option value={webKeyId}>{WEB_RUNS_LABEL}</option>}
              {keyList.map((k) => (
                <option key={k.id} value={k.id}>
                  {k.name} (…{k.last4})
                </option>
              ))}
            </select>
          </label>
        )}
        {dimension === "AGENT" && (
          <AgentPicker choices={choices} partial={agents.state === "ready" && agents.value.partial} value={subject} onChange={setSubject} none="choose an agent" />
        )}
      </div>
      {dimension === "AGENT" && <p className="muted small">An agent's figures count every caller's executions, not only this wallet's.</p>}
      {dimension === "AGENT" && agents.state === "error" && <ErrorNotice error={agents.error} onRetry={reloadAgents} />}
      {usage.state === "loading" && <Loading what="usage" />}
      {usage.state === "error" && <ErrorNotice error={usage.error} onRetry={reload} />}
      {usage.state === "ready" && usage.value === null && (
        <Empty>
          {dimension === "API_KEY"
            ? "Choose a key, or web runs."
            : agents.state === "ready" && choices.length === 0
              ? "No agent to choose yet: this wallet has paid none and registered none."
              : "Choose an agent."}
        </Empty>
      )}
      {usage.state === "ready" && usage.value !== null && (
        <>
          <dl className="totals" data-testid="usage-totals" data-range={usage.value.range}>
            <div>
              <dt>Executions</dt>
              <dd data-testid="total-executions">{usage.value.totals.executions}</dd>
            </div>
            <div>
              <dt>Settled</dt>
              <dd>{usage.value.totals.settled}</dd>
            </div>
            <div>
              <dt>Refunded</dt>
              <dd>{usage.value.totals.refunded}</dd>
            </div>
            <div>
              <dt>Spent</dt>
              <dd>
                <Usdc amount={usage.value.totals.spent.usdc} testId="total-spent" />
              </dd>
            </div>
          </dl>
          {!usage.value.totals.spent.finalized && <p className="muted small">Some of these figures are confirmed but not yet finalized by the chain.</p>}
          {usage.value.totals.executions === 0 && usage.value.dimension === "PAYER" && <Empty>{noMatch({ range: usage.value.range })}</Empty>}
          {usage.value.totals.executions === 0 && usage.value.dimension !== "PAYER" && (
            <NoMatch text={noMatch({ ...askedFor, range: usage.value.range })} clear="Show this wallet's usage" onClear={showWallet} />
          )}
          {usage.value.totals.executions > 0 && (
            <div className="charts">
              <BarChart bars={countBars} title="Executions" unit="executions" unitOfOne="execution" format={countFigure} timeAxis={timeAxis} testId="chart-executions" />
              <BarChart bars={bars} title="USDC spent" unit="USDC" format={usdcFigure} timeAxis={timeAxis} testId="chart-spent" />
            </div>
          )}
          <button type="button" onClick={() => download(`usage-${usage.value!.range}.csv`, usageCsv(usage.value!.subject, usage.value!.buckets))}>
            Export CSV
          </button>
        </>
      )}
    </>
  );
}
