import type { ApiKey } from "@agent-market/client";
import { useMemo, useState } from "react";

import { useApp } from "../app-context.js";
import { BarChart } from "../components/BarChart.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { Empty, Loading } from "../components/Status.js";
import { fetchUsage, usageCsv, type Dimension, type Range } from "../data/usage.js";
import { useLoad } from "../data/use-load.js";

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function bucketLabel(start: string, range: Range): string {
  const d = new Date(start);
  return range === "24h" ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : d.toLocaleDateString();
}

export function UsageScreen() {
  const { session, config } = useApp();
  const [range, setRange] = useState<Range>("24h");
  const [dimension, setDimension] = useState<Dimension>("PAYER");
  const [subject, setSubject] = useState("");
  const [keys] = useLoad(async () => (await session.keys.list({ limit: 100 })).data, [session]);
  const effective = dimension === "PAYER" ? session.address : subject;
  const [usage, reload] = useLoad(
    async () => (effective === "" ? null : fetchUsage(config.indexer_graphql_url, dimension, effective, range)),
    [dimension, effective, range],
  );

  const bars = useMemo(
    () =>
      usage.state === "ready" && usage.value !== null
        ? usage.value.buckets.map((b) => ({ label: bucketLabel(b.start, range), value: Number(b.spent.usdc), text: `${b.executions} executions, ${b.spent.usdc} USDC` }))
        : [],
    [usage, range],
  );
  const countBars = useMemo(
    () =>
      usage.state === "ready" && usage.value !== null
        ? usage.value.buckets.map((b) => ({ label: bucketLabel(b.start, range), value: b.executions, text: `${b.executions} executions` }))
        : [],
    [usage, range],
  );

  const keyList: ApiKey[] = keys.state === "ready" ? keys.value : [];
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
            value={dimension}
            onChange={(e) => {
              setDimension(e.target.value as Dimension);
              setSubject("");
            }}
          >
            <option value="PAYER">this wallet</option>
            <option value="API_KEY">one key</option>
            <option value="AGENT">one agent</option>
          </select>
        </label>
        {dimension === "API_KEY" && (
          <label>
            Key
            <select value={subject} onChange={(e) => setSubject(e.target.value)}>
              <option value="">choose a key</option>
              {keyList.map((k) => (
                <option key={k.id} value={k.id}>
                  {k.name} (…{k.last4})
                </option>
              ))}
            </select>
          </label>
        )}
        {dimension === "AGENT" && (
          <label>
            Agent address
            <input value={subject} onChange={(e) => setSubject(e.target.value.trim())} placeholder="agent account (base58)" />
          </label>
        )}
      </div>
      {usage.state === "loading" && <Loading what="usage" />}
      {usage.state === "error" && <ErrorNotice error={usage.error} onRetry={reload} />}
      {usage.state === "ready" && usage.value === null && <Empty>Choose what to show.</Empty>}
      {usage.state === "ready" && usage.value !== null && (
        <>
          <dl className="totals" data-testid="usage-totals">
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
              <dt>USDC spent</dt>
              <dd data-testid="total-spent">{usage.value.totals.spent.usdc}</dd>
            </div>
          </dl>
          {!usage.value.totals.spent.finalized && <p className="muted small">Some of these figures are confirmed but not yet finalized by the chain.</p>}
          {usage.value.totals.executions === 0 ? (
            <Empty>No executions in this period.</Empty>
          ) : (
            <div className="charts">
              <BarChart bars={countBars} title="Executions" testId="chart-executions" />
              <BarChart bars={bars} title="USDC spent" testId="chart-spent" />
            </div>
          )}
          <button type="button" onClick={() => download(`usage-${range}.csv`, usageCsv(effective, usage.value!.buckets))}>
            Export CSV
          </button>
        </>
      )}
    </>
  );
}
