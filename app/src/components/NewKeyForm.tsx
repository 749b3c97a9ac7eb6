import { formatUsdc, parseUsdc, type CreatedApiKey } from "@agent-market/client";
import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { ErrorNotice } from "./ErrorNotice.js";

/** Generate: name, environment (those the relayer serves), optional spending cap and expiry. */
export function NewKeyForm({ onCreated }: { onCreated: (key: CreatedApiKey) => void }) {
  const { session, config } = useApp();
  const environments = config.networks.map((n): "test" | "live" => (n === "mainnet" ? "live" : "test"));
  const [name, setName] = useState("");
  const [environment, setEnvironment] = useState<"test" | "live">(environments[0] ?? "test");
  const [cap, setCap] = useState("");
  const [expires, setExpires] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const key = await session.keys.create({
        name: name.trim(),
        environment,
        ...(cap.trim() === "" ? {} : { spending_cap_usdc: formatUsdc(parseUsdc(cap.trim())) }),
        ...(expires === "" ? {} : { expires_at: new Date(`${expires}T23:59:59`).toISOString() }),
      });
      setName("");
      setCap("");
      setExpires("");
      onCreated(key);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card form" onSubmit={(e) => void submit(e)} aria-label="Generate an API key">
      <h2>Generate a key</h2>
      <label>
        Name
        <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} placeholder="production server" />
      </label>
      <label>
        Environment
        <select value={environment} onChange={(e) => setEnvironment(e.target.value as "test" | "live")}>
          {environments.map((env) => (
            <option key={env} value={env}>
              {env === "test" ? "test (devnet)" : "live (mainnet)"}
            </option>
          ))}
        </select>
      </label>
      <label>
        Spending cap, USDC (optional)
        <input inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,6})?" value={cap} onChange={(e) => setCap(e.target.value)} placeholder="no cap" />
      </label>
      <label>
        Expires (optional)
        <input type="date" value={expires} min={new Date().toISOString().slice(0, 10)} onChange={(e) => setExpires(e.target.value)} />
      </label>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? "Generating…" : "Generate key"}
      </button>
      {error !== null && <ErrorNotice error={error} />}
    </form>
  );
}
