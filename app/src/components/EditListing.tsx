import type { Agent as Listing } from "@agent-market/client";
import { useState, type FormEvent } from "react";

import { useApp } from "../app-context.js";
import { openChain } from "../data/chain.js";
import { checkDocument, documentForm } from "../data/listing-document.js";
import { updateListing } from "../data/listing-update.js";
import { checkPricing, pricingForm } from "../data/pricing.js";
import { DocumentFields } from "./DocumentFields.js";
import { ErrorNotice } from "./ErrorNotice.js";
import { FormProblems } from "./FormProblems.js";
import { ExplorerLink } from "./ExplorerLink.js";
import { PricingFields } from "./PricingFields.js";
import { SchemaFields } from "./SchemaFields.js";

/**
 * A listed agent's name, description, tags, pricing and schemas, changed with update_agent (the
 * wallet signs the new listing hash and pricing) and then on the relayer's listing. New terms
 * apply to executions opened afterwards.
 */
export function EditListing({ listing, minimumPriceUsdc, onSaved }: { listing: Listing; minimumPriceUsdc: bigint; onSaved(listing: Listing): void }) {
  const { wallet, session, config, network } = useApp();
  const [form, setForm] = useState(() => documentForm(listing));
  const [pricing, setPricing] = useState(() => pricingForm(listing.pricing));
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const field = (name: keyof typeof form) => ({ value: form[name], onChange: (e: { target: { value: string } }) => setForm({ ...form, [name]: e.target.value }) });
  const id = `edit-${listing.id}`;

  async function save(event: FormEvent) {
    event.preventDefault();
    const document = checkDocument(form);
    const priced = checkPricing(pricing, minimumPriceUsdc);
    const found = [...(Array.isArray(document) ? document : []), ...(Array.isArray(priced) ? priced : [])];
    setProblems(found);
    setSaved(null);
    if (Array.isArray(document) || Array.isArray(priced)) return;
    setBusy(true);
    setError(null);
    try {
      const done = await updateListing(await openChain(config, network), wallet, session, listing.id, { document, pricing: priced });
      setSaved(done.signature);
      onSaved(done.listing);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="form edit-listing" aria-label={`Edit the listing of ${listing.name}`} onSubmit={(e) => void save(e)} noValidate data-testid="edit-listing">
      <DocumentFields name={field("name")} tags={field("tags")} description={field("description")} />
      <PricingFields name={id} value={pricing} onChange={setPricing} minimumUsdc={minimumPriceUsdc} />
      <SchemaFields input={field("input")} output={field("output")} />
      <FormProblems problems={problems} testId="edit-problems" />
      {error !== null && <ErrorNotice error={error} />}
      {saved !== null && (
        <div className="notice notice-ok" role="status" data-testid="edit-saved">
          Saved: the new terms apply to executions opened from now on. <ExplorerLink signature={saved} />
        </div>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Waiting for the wallet: update_agent…" : "Sign and save"}
        </button>
      </div>
    </form>
  );
}
