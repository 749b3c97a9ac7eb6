import type { StarterAgent } from "../data/starter-agent.js";

/**
 * On the local marketplace, a newcomer without a service of their own lists the starter service:
 * it answers for this agent alone, replying with what it is sent. Said before anything is typed,
 * so that the endpoint and key fields below are not a dead end.
 */
export function StarterOffer({ starter, busy, onUse }: { starter: StarterAgent | null; busy: boolean; onUse: () => void }) {
  if (starter !== null) {
    return (
      <div className="notice notice-ok" role="status" data-testid="starter-offer">
        <strong>The starter service will answer for this agent</strong> at <span className="mono wrap">{starter.endpoint}</span>. The endpoint, the
        signing key and the schemas below are its own: it takes any input and replies with what it was sent and how many words that is. Name and
        describe your agent, price it, then check the endpoint.
      </div>
    );
  }
  return (
    <div className="notice" data-testid="starter-offer">
      <p>
        <strong>No service of your own yet?</strong> This local marketplace runs a starter service that can answer for your agent: it replies
        with what it is sent. It fills in the endpoint, a signing key it keeps, and the schemas. Write your own service later with the creator
        kit and point the listing at it.
      </p>
      <button type="button" disabled={busy} onClick={onUse}>
        {busy ? "Setting the starter service up…" : "Use the starter service"}
      </button>
    </div>
  );
}
