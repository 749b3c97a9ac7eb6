import { formatUsdc, parseUsdc, type Agent as Listing, type Pricing } from "@agent-market/client";
import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { Check } from "../components/Check.js";
import { ConformanceSteps, failedStep, type ProbeOutcome } from "../components/ConformanceSteps.js";
import { DocumentFields } from "../components/DocumentFields.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { trimUsdc, usdcText } from "../components/money.js";
import { ExplorerLink } from "../components/ExplorerLink.js";
import { FormProblems } from "../components/FormProblems.js";
import { PricingFields } from "../components/PricingFields.js";
import { SchemaFields } from "../components/SchemaFields.js";
import { listedKey, NEW_SIGNING_KEY, SigningKeyFields, type SigningKeyState } from "../components/SigningKeyFields.js";
import { StarterOffer } from "../components/StarterOffer.js";
import { Loading } from "../components/Status.js";
import { Usdc } from "../components/Usdc.js";
import { openChain } from "../data/chain.js";
import { checkDocument, NEW_SCHEMA } from "../data/listing-document.js";
import {
  generateSigningKey,
  listAgent,
  marketTerms,
  planAgent,
  probeEndpoint,
  registerAgent,
  signingKeyProblem,
  signingKeyProof,
  type ListingInput,
  type PlannedAgent,
} from "../data/listing.js";
import { checkPricing, NEW_PRICING } from "../data/pricing.js";
import { setUpStarterAgent } from "../data/starter-agent.js";
import { useLoad } from "../data/use-load.js";

/**
 * The creator checklist in the browser: the relayer probes the endpoint for the address the agent
 * will have, and only once that passes does the wallet sign register_agent (locking collateral);
 * then the relayer lists it. The agent's address is chosen when the page opens, so that a key kept
 * elsewhere can sign its proof for it before anything is sent.
 */
export function ListAgentScreen() {
  const { wallet, session, config, network } = useApp();
  const [terms, reloadTerms] = useLoad(async () => {
    const chain = await openChain(config, network);
    return { ...(await marketTerms(chain, wallet.address)), planned: planAgent(chain) };
  }, [wallet.address]);
  const [form, setForm] = useState({ name: "", description: "", tags: "", endpoint: "", collateral: "", maxSecs: "30", input: NEW_SCHEMA, output: NEW_SCHEMA });
  const [pricing, setPricing] = useState(NEW_PRICING);
  const [key, setKey] = useState<SigningKeyState>(NEW_SIGNING_KEY);
  const [starterBusy, setStarterBusy] = useState(false);
  const [problems, setProblems] = useState<string[]>([]);
  const [step, setStep] = useState<string | null>(null);
  const [registered, setRegistered] = useState<{ agent: string; signature: string; input: ListingInput; pricing: Pricing; latency_ms: number } | null>(null);
  const [listed, setListed] = useState<Listing | null>(null);
  const [error, setError] = useState<unknown>(null);
  // A probe's outcome holds only for the endpoint, key, schemas and time limit it was run with.
  const [probe, setProbe] = useState<{ key: string; outcome: ProbeOutcome } | null>(null);
  const field = (name: keyof typeof form) => ({ value: form[name], onChange: (e: { target: { value: string } }) => setForm({ ...form, [name]: e.target.value }) });

  if (terms.state === "loading") return <Loading what="the market's terms" />;
  if (terms.state === "error") return <ErrorNotice error={terms.error} onRetry={reloadTerms} />;
  const t = terms.value;
  const planned: PlannedAgent = t.planned;
  const signingKey = listedKey(key);
  const proofText = key.mode === "paste" ? key.pastedProof.trim() : key.mode === "starter" ? (key.starter?.key_proof ?? "") : "";
  const probeKey = JSON.stringify([form.endpoint.trim(), signingKey.trim(), proofText, form.input, form.output, form.maxSecs]);
  const outcome = probe?.key === probeKey ? probe.outcome : null;
  const probePassed = outcome?.state === "passed";

  function validate(): { input: Omit<ListingInput, "keyProof">; pricing: Pricing } | string[] {
    const document = checkDocument(form);
    const found: string[] = Array.isArray(document) ? [...document] : [];
    if (!URL.canParse(form.endpoint) || !/^https?:$/.test(new URL(form.endpoint).protocol)) found.push("Endpoint: an http(s) URL your service answers POST /execute on.");
    const priced = checkPricing(pricing, t.minimumPriceUsdc);
    if (Array.isArray(priced)) found.push(...priced);
    let collateral = t.minimumCollateralUsdc;
    if (form.collateral.trim() !== "") {
      try {
        collateral = parseUsdc(form.collateral.trim());
      } catch {
        found.push("Collateral: an amount in USDC.");
      }
    }
    if (collateral < t.minimumCollateralUsdc) found.push(`Collateral: at least the market's minimum, ${usdcText(formatUsdc(t.minimumCollateralUsdc))}.`);
    else if (collateral > t.balanceUsdc) found.push(`Collateral: the wallet holds ${usdcText(formatUsdc(t.balanceUsdc))}, less than ${usdcText(formatUsdc(collateral))}.`);
    const maxSecs = Number(form.maxSecs);
    if (!Number.isInteger(maxSecs) || maxSecs < 1 || maxSecs > t.maxExecutionSecs) found.push(`Maximum execution time: 1 to ${t.maxExecutionSecs} seconds.`);
    const keyProblem =
      signingKey === ""
        ? key.mode === "starter"
          ? "Signing key: set the starter service up for this agent first."
          : "Signing key: paste your service's public key, or generate one."
        : signingKeyProblem(signingKey);
    if (keyProblem !== null) found.push(keyProblem.startsWith("Signing key") ? keyProblem : `Signing key: ${keyProblem}`);
    if (key.mode === "generate" && key.generated !== null && !key.downloaded) found.push("Signing key: download the keypair file first; it is shown only once.");
    if (found.length > 0 || Array.isArray(document) || Array.isArray(priced)) return found;
    return {
      pricing: priced.wire,
      input: {
        document,
        endpoint: form.endpoint.trim(),
        signingKey,
        pricing: priced.chain,
        collateralUsdc: collateral,
        maxExecutionSecs: maxSecs,
      },
    };
  }

  async function list(agent: string, input: ListingInput, wirePricing: Pricing) {
    setStep("The marketplace is probing your endpoint…");
    setListed(await listAgent(session, await openChain(config, network), agent, input, wirePricing));
  }

  /** The form, with the signing key's proof for the planned agent; or what is wrong with them. */
  async function validateWithProof(): Promise<{ input: ListingInput; pricing: Pricing } | string[]> {
    const checked = validate();
    if (Array.isArray(checked)) return checked;
    const chain = await openChain(config, network);
    const given = key.mode === "generate" && key.generated !== null ? { generated: key.generated } : { signingKey, pastedProof: proofText };
    const proof = await signingKeyProof(chain, planned.agent, wallet.address, given);
    return typeof proof === "string" ? [proof] : { ...checked, input: { ...checked.input, keyProof: proof } };
  }

  async function checkEndpoint() {
    const key = probeKey;
    let checked: Awaited<ReturnType<typeof validateWithProof>>;
    try {
      checked = await validateWithProof();
    } catch (e) {
      setError(e);
      return;
    }
    if (Array.isArray(checked)) {
      setProblems(checked);
      return;
    }
    setProblems([]);
    setError(null);
    setProbe({ key, outcome: { state: "running" } });
    try {
      const chain = await openChain(config, network);
      setProbe({ key, outcome: { state: "passed", latency_ms: await probeEndpoint(session, chain, planned.agent, checked.input) } });
    } catch (e) {
      setProbe({ key, outcome: { state: "failed", error: e } });
      if (failedStep(e) === null) setError(e);
    }
  }

  /** The starter service's key for the planned agent, with its endpoint and schemas filled in. */
  async function useStarter() {
    setStarterBusy(true);
    setError(null);
    try {
      const starter = await setUpStarterAgent(session, planned.agent);
      setKey({ ...key, mode: "starter", starter });
      setForm({
        ...form,
        endpoint: starter.endpoint,
        input: JSON.stringify(starter.input_schema, null, 2),
        output: JSON.stringify(starter.output_schema, null, 2),
      });
    } catch (e) {
      setError(e);
    } finally {
      setStarterBusy(false);
    }
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (outcome?.state !== "passed") return;
    setProblems([]);
    setError(null);
    try {
      const checked = await validateWithProof();
      if (Array.isArray(checked)) {
        setProblems(checked);
        return;
      }
      setStep(`Waiting for the wallet: register_agent locks ${usdcText(formatUsdc(checked.input.collateralUsdc))}…`);
      const chain = await openChain(config, network);
      const done = await registerAgent(chain, wallet, planned, checked.input);
      setRegistered({ ...done, input: checked.input, pricing: checked.pricing, latency_ms: outcome.latency_ms });
      reloadTerms();
      await list(done.agent, checked.input, checked.pricing);
    } catch (e) {
      setError(e);
    } finally {
      setStep(null);
    }
  }

  return (
    <>
      <h1>List an agent</h1>
      <ol className="plain checklist" aria-label="Checklist" data-testid="checklist">
        <Check ok>
          Wallet connected: <span className="mono wrap">{wallet.address}</span>
        </Check>
        <Check ok>
          Rent: register_agent also pays, from the wallet's SOL, the rent of the agent account, its two USDC vaults
          and its receipt log, which its settlements append to (about 0.06 SOL in all, held for the agent's life).
        </Check>
        <Check ok={registered !== null || t.balanceUsdc >= t.minimumCollateralUsdc}>
          Collateral: the market's minimum is <strong>
            <Usdc amount={formatUsdc(t.minimumCollateralUsdc)} testId="minimum-collateral" />
          </strong>, locked by register_agent until you
          retire the agent;{" "}
          {registered !== null ? (
            <>
              <Usdc amount={formatUsdc(registered.input.collateralUsdc)} /> is locked.
            </>
          ) : (
            <>
              the wallet holds <Usdc amount={formatUsdc(t.balanceUsdc)} />.
              {t.balanceUsdc < t.minimumCollateralUsdc && (
                <>
                  {" "}
                  <a href="#/wallet" data-testid="fund-collateral">
                    {config.localnet ? "Fund it with test USDC on the Wallet screen (one click)" : "Add USDC to it on the Wallet screen"}
                  </a>
                  , then come back.
                </>
              )}
            </>
          )}
        </Check>
        <Check ok={signingKey === "" ? null : signingKeyProblem(signingKey) === null && (key.mode !== "generate" || key.downloaded)}>Signing key given: the Ed25519 key your service signs its results with</Check>
        <ConformanceSteps
          outcome={registered !== null ? { state: "passed", latency_ms: registered.latency_ms } : outcome}
          target={{ endpoint: registered?.input.endpoint ?? form.endpoint.trim(), agent: registered?.agent ?? planned.agent }}
        />
        <Check ok={registered === null ? null : true}>
          Registered on chain{registered !== null ? (
            <>
              : <span className="mono wrap" data-testid="registered-agent">{registered.agent}</span> <ExplorerLink signature={registered.signature} />
            </>
          ) : (
            <>
              {" "}
              as <span className="mono wrap" data-testid="planned-agent">{planned.agent}</span>
            </>
          )}
        </Check>
        <Check ok={listed === null ? (registered !== null && error !== null ? false : null) : true}>
          Listed (the marketplace probes your service once more){listed?.last_probe ? `: answered in ${listed.last_probe.latency_ms} ms` : ""}
        </Check>
      </ol>
      {listed !== null ? (
        <div className="notice notice-ok" role="status" data-testid="listed">
          <strong>{listed.name} is listed</strong> ({listed.status}). <a href={`#/agents/${encodeURIComponent(listed.id)}`}>Open its page</a> or follow it on <a href="#/my-agents">My agents</a>.
        </div>
      ) : registered !== null ? (
        <>
          {error !== null && <ErrorNotice error={error} />}
          <p>The agent is registered with its collateral; fix what the probe reported (your service, not this form), then list it again.</p>
          <button
            type="button"
            className="primary"
            disabled={step !== null}
            onClick={() => {
              setError(null);
              void list(registered.agent, registered.input, registered.pricing).catch(setError).finally(() => setStep(null));
            }}
          >
            {step ?? "List it again"}
          </button>
        </>
      ) : (
        <form className="card form" aria-label="Your agent" onSubmit={(e) => void submit(e)} noValidate>
          <h2>Your agent</h2>
          {config.starter_agent && <StarterOffer starter={key.mode === "starter" ? key.starter : null} busy={starterBusy} onUse={() => void useStarter()} />}
          <DocumentFields name={field("name")} tags={field("tags")} description={field("description")} />
          <label className="wide">
            Endpoint (your service's base URL)
            <input type="url" inputMode="url" placeholder="https://agent.example.com" {...field("endpoint")} />
          </label>
          <PricingFields name="listing" value={pricing} onChange={setPricing} minimumUsdc={t.minimumPriceUsdc} />
          <label className="half">
            Collateral, USDC (at least {trimUsdc(formatUsdc(t.minimumCollateralUsdc))})
            <input inputMode="decimal" placeholder="the minimum if empty" {...field("collateral")} />
          </label>
          <label className="half">
            Maximum execution time, seconds
            <input inputMode="numeric" {...field("maxSecs")} />
          </label>
          <SigningKeyFields
            state={key}
            onChange={setKey}
            planned={planned.agent}
            wallet={wallet.address}
            onUseStarter={config.starter_agent ? () => void useStarter() : null}
            starterBusy={starterBusy}
            onGenerate={() => void generateSigningKey().then((generated) => setKey({ ...key, generated }), setError)}
          />
          <SchemaFields input={field("input")} output={field("output")} />
          <FormProblems problems={problems} testId="listing-problems" />
          {error !== null && <ErrorNotice error={error} />}
          <p className="small" id="register-gate" role="status">
            {outcome?.state === "running"
              ? "The marketplace is probing your endpoint…"
              : probePassed
                ? "Your endpoint is reachable and conforms: registering is open."
                : outcome?.state === "failed" && failedStep(outcome.error) !== null
                  ? "The endpoint check failed (the checklist above says why): fix your service, then check again. Nothing was signed and no collateral is locked."
                  : "Registering locks your collateral, so check your endpoint first: registering opens once it is reachable and conforms."}
          </p>
          <div className="row">
            <button type="button" disabled={outcome?.state === "running" || step !== null} onClick={() => void checkEndpoint()}>
              Check my endpoint
            </button>
            <button type="submit" className="primary" disabled={step !== null || !probePassed} aria-describedby="register-gate">
              {step ?? "Sign, register and list"}
            </button>
          </div>
        </form>
      )}
    </>
  );
}
