import { AgentMarketError, formatUsdc, parseUsdc, type Agent as Listing } from "@agent-market/client";
import { useState } from "react";

import { useApp } from "../app-context.js";
import { AgentFigures } from "../components/AgentFigures.js";
import { CollateralPanel } from "../components/CollateralPanel.js";
import { EditListing } from "../components/EditListing.js";
import { ErrorNotice } from "../components/ErrorNotice.js";
import { Empty, Loading } from "../components/Status.js";
import { StatusBadge } from "../components/StatusBadge.js";
import { TopUpToMinimum } from "../components/TopUpToMinimum.js";
import { Usdc } from "../components/Usdc.js";
import { usdcText } from "../components/money.js";
import { priceText } from "../components/price.js";
import { freshMarket, openChain } from "../data/chain.js";
import { agentsChanged, useLive } from "../data/live.js";
import { creatorFigures, dailyEarnings, listingOf, type CreatorAgent } from "../data/my-agents.js";
import { useLoad } from "../data/use-load.js";

/** About how long the indexer takes to show a confirmed transaction on localnet or a cluster. */
const INDEXER_CATCH_UP_MS = 2_000;

const short = (s: string) => `${s.slice(0, 6)}…${s.slice(-4)}`;

/** The amounts of a refusal for want of collateral (an upheld dispute's slash), null for any other error. */
function belowMinimum(error: unknown): { collateralUsdc: bigint; minimumUsdc: bigint } | null {
  if (!(error instanceof AgentMarketError) || error.code !== "collateral_below_minimum") return null;
  const { collateral_usdc, minimum_collateral_usdc } = error.details;
  if (typeof collateral_usdc !== "string" || typeof minimum_collateral_usdc !== "string") return null;
  return { collateralUsdc: parseUsdc(collateral_usdc), minimumUsdc: parseUsdc(minimum_collateral_usdc) };
}

/** The editor, once the market's minimum price (which its pricing must meet) is read. */
function ListingEditor({ listing, onSaved }: { listing: Listing; onSaved(listing: Listing): void }) {
  const { config, network } = useApp();
  const [minimum, reload] = useLoad(async () => (await freshMarket(await openChain(config, network))).minPricePerCallUsdc, []);
  if (minimum.state === "loading") return <Loading what="the market's minimum price" />;
  if (minimum.state === "error") return <ErrorNotice error={minimum.error} onRetry={reload} />;
  return <EditListing listing={listing} minimumPriceUsdc={minimum.value} onSaved={onSaved} />;
}

function MyAgent({ agent, onCollateralChanged }: { agent: CreatorAgent; onCollateralChanged(): void }) {
  const { session, config } = useApp();
  const [listing, reloadListing, setListing] = useLoad(() => listingOf(agent.address), [agent.address]);
  // Read again with each new copy of the agent's figures: an execution moves both.
  const [earnings] = useLoad(() => dailyEarnings(config.indexer_graphql_url, agent.address), [agent]);
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // A top-up made from a refusal: the collateral panel reads the account again.
  const [topUps, setTopUps] = useState(0);
  const name = listing.state === "ready" && listing.value !== null ? listing.value.name : short(agent.address);

  async function transition(action: "pause" | "resume") {
    setBusy(true);
    setError(null);
    try {
      setListing(await session.listings[action](agent.address));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  const status = listing.state === "ready" && listing.value !== null ? listing.value.status : null;
  const refusal = belowMinimum(error);
  return (
    <li className="card" data-testid="my-agent">
      <h2>
        {name} <StatusBadge status={agent.status} retired={agent.retiredAt !== null || status === "retired"} />{" "}
        {status !== null && (
          <span className={`badge badge-listing-${status}`} data-testid="listing-status">
            listing {status}
          </span>
        )}
      </h2>
      <p className="mono small muted wrap">{agent.address}</p>
      {listing.state === "ready" && listing.value !== null && (
        <p className="small">
          Pricing: <span data-testid="listing-pricing">{priceText(listing.value.pricing)}</span>
        </p>
      )}
      {listing.state === "ready" && listing.value !== null && listing.value.status === "paused" && listing.value.pause_reason !== null && listing.value.pause_reason !== "creator" && (
        <p className="notice notice-warn small" role="status" data-testid="listing-pause-reason">
          {listing.value.pause_reason === "terms_changed"
            ? "Paused by the marketplace: the agent's price (or listing hash) on chain is not its listing's, so no call is charged. Edit the listing to list the new price; it runs again at once."
            : "Paused by the marketplace: the agent's endpoint on chain is not the one its listing probed. Edit the listing to list the new endpoint, then resume it."}
        </p>
      )}
      {listing.state === "ready" && listing.value !== null && listing.value.circuit.state !== "closed" && (
        <p className="notice notice-warn small" role="status" data-testid="listing-circuit">
          Your service failed too many calls lately: the marketplace refuses its calls
          {listing.value.circuit.retry_at === null ? " until one test call succeeds" : ` until ${new Date(listing.value.circuit.retry_at).toLocaleTimeString()}, then lets one test call decide`}.
        </p>
      )}
      {listing.state === "error" && <ErrorNotice error={listing.error} onRetry={reloadListing} />}
      {listing.state === "ready" && listing.value === null && <p className="muted small">Registered on chain but not listed on this marketplace.</p>}
      {(status === "active" || status === "paused") && (
        <div className="row">
          <button type="button" disabled={busy} onClick={() => void transition(status === "active" ? "pause" : "resume")}>
            {status === "active" ? `Pause ${name}` : `Resume ${name}`}
          </button>
          <span className="muted small">{status === "active" ? "Pausing hides it and refuses new executions; nothing changes on chain." : "Paused: hidden and refusing new executions."}</span>
          <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
            {editing ? "Close the editor" : `Edit the listing of ${name}`}
          </button>
        </div>
      )}
      {editing && listing.state === "ready" && listing.value !== null && listing.value.status !== "retired" && (
        <ListingEditor listing={listing.value} onSaved={setListing} />
      )}
      {error !== null && refusal === null && <ErrorNotice error={error} />}
      {refusal !== null && (
        <TopUpToMinimum
          address={agent.address}
          name={name}
          collateralUsdc={refusal.collateralUsdc}
          minimumUsdc={refusal.minimumUsdc}
          words={`${name} cannot resume yet: it locks ${usdcText(formatUsdc(refusal.collateralUsdc))}, less than the market's minimum of ${usdcText(formatUsdc(refusal.minimumUsdc))}, and the marketplace offers only agents that lock the minimum (an upheld dispute paid a payer from it).`}
          label={(missing) => `Sign: top up ${missing} and resume`}
          after={async () => {
            setTopUps(topUps + 1);
            onCollateralChanged();
            await transition("resume");
          }}
        />
      )}
      <div className="two-col">
        <AgentFigures agent={agent} earnings={earnings.state === "ready" ? earnings.value : null} />
        <CollateralPanel key={topUps} address={agent.address} name={name} onRetired={reloadListing} onChanged={onCollateralChanged} />
      </div>
    </li>
  );
}

/** The signed-in creator's agents: their record, listing and collateral. */
export function MyAgentsScreen() {
  const { session, config } = useApp();
  const [figures, reload] = useLoad(() => creatorFigures(config.indexer_graphql_url, session.address), [session]);
  // One stream for all the creator's agents (the indexer's agentsUpdated): each stays current.
  useLive(config.indexer_graphql_url, figures.state === "ready" ? agentsChanged(figures.value.agents.map((a) => a.address)) : [], reload);
  // The totals come from the indexer, which follows the chain a moment behind the wallet's
  // confirmation: read them at once, and again once it has caught up.
  const refreshTotals = () => {
    reload();
    setTimeout(reload, INDEXER_CATCH_UP_MS);
  };
  return (
    <>
      <h1>My agents</h1>
      {figures.state === "loading" && <Loading what="your agents" />}
      {figures.state === "error" && <ErrorNotice error={figures.error} onRetry={reload} />}
      {figures.state === "ready" && (
        <>
          <dl className="totals">
            <div>
              <dt>Earned, all time</dt>
              <dd>
                <Usdc amount={figures.value.earnings.usdc} testId="earnings" />
              </dd>
            </div>
            <div>
              <dt>Collateral held</dt>
              <dd>
                <Usdc amount={figures.value.collateral.usdc} testId="collateral-held" />
              </dd>
            </div>
          </dl>
          {figures.value.agents.length === 0 ? (
            <Empty>
              This wallet has registered no agent. <a href="#/list-agent">List an agent</a> (or run agent-market register), then it shows here.
            </Empty>
          ) : (
            <ul className="plain">
              {figures.value.agents.map((a) => (
                <MyAgent key={a.address} agent={a} onCollateralChanged={refreshTotals} />
              ))}
            </ul>
          )}
        </>
      )}
    </>
  );
}
