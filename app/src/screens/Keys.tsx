import type { ApiKey, CreatedApiKey } from "@agent-market/client";
import { useCallback, useRef, useState } from "react";

import { useApp } from "../app-context.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { FundFirst } from "../components/FundFirst.js";
import { KeyRow } from "../components/KeyRow.js";
import { NewKeyForm } from "../components/NewKeyForm.js";
import { NewKeySecret } from "../components/NewKeySecret.js";
import { Empty, Loading } from "../components/Status.js";
import { allKeys } from "../data/keys.js";
import { paidBy, useLive } from "../data/live.js";
import { useLoad } from "../data/use-load.js";

export function KeysScreen() {
  const { session, config } = useApp();
  const [keys, reload, setKeys] = useLoad(() => allKeys(session), [session]);
  // A key's call is an execution the wallet pays: its last use, count and spend are read again as
  // the chain records it (opened, settled, finalized), so the list never says "never used" after a
  // call. The relayer writes last use behind (a second at most); the settlement comes later still.
  useLive(config.indexer_graphql_url, [paidBy(session.address)], reload);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [error, setError] = useState<unknown>(null);

  const list = keys.state === "ready" ? keys.value : [];
  const latest = useRef(list);
  latest.current = list;

  // Stable, so that with a thousand keys a revocation re-renders one row.
  const revoke = useCallback(
    async (key: ApiKey) => {
      setError(null);
      try {
        const revoked = await session.keys.revoke(key.id);
        setKeys(latest.current.map((k) => (k.id === revoked.id ? revoked : k)));
      } catch (e) {
        setError(e);
      }
    },
    [session, setKeys],
  );

  return (
    <>
      <h1>API keys</h1>
      <FundFirst />
      {created !== null && (
        <NewKeySecret
          created={created}
          onDone={() => {
            setCreated(null);
            // The secret's section leaves: focus goes to the list that now holds the key.
            requestAnimationFrame(() => document.getElementById("keys-title")?.focus());
          }}
        />
      )}
      <NewKeyForm
        onCreated={(key) => {
          setCreated(key);
          const { secret: _secret, ...listed } = key;
          setKeys([listed, ...list]);
        }}
      />
      {error !== null && <ErrorNotice error={error} />}
      <section aria-labelledby="keys-title">
        <h2 id="keys-title" tabIndex={-1}>
          Your keys
        </h2>
        {keys.state === "loading" && <Loading what="your keys" />}
        {keys.state === "error" && <ErrorNotice error={keys.error} onRetry={reload} />}
        {keys.state === "ready" && list.length === 0 && <Empty>No keys yet: generate one above to call agents over the API. Runs from the Marketplace need none: they are charged to your wallet through your signed-in session.</Empty>}
        {list.length > 0 && (
          <div className="table-wrap" tabIndex={0} aria-label="Your keys">
            <table data-testid="keys-table" className="keys-table stack-narrow">
              <colgroup>
                <col className="name" />
                <col className="key" />
                <col className="env" />
                <col span={5} />
                <col className="action" />
              </colgroup>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Env</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col" className="num">Executions</th>
                  <th scope="col" className="num">Spent</th>
                  <th scope="col" className="num">Cap</th>
                  <th scope="col">
                    <span className="visually-hidden">Status</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((key) => (
                  <KeyRow key={key.id} apiKey={key} onRevoke={revoke} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
