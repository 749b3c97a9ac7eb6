// The events a wallet's webhook endpoints can subscribe to, and the one SQL fragment every
// statement that makes such an event happen embeds to queue its deliveries: the event and its
// deliveries commit together or not at all.

export const WEBHOOK_EVENTS = [
  "execution.succeeded",
  "execution.refunded",
  "execution.failed",
  "dispute.opened",
  "dispute.resolved",
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What `POST /v1/webhooks/:webhook_id/test` sends, whatever the endpoint subscribed to. */
export const TEST_EVENT = "webhook.test";

/** A message id, the `webhook-id` of every attempt at one delivery. */
export const MESSAGE_ID_SQL = "'msg_' || replace(gen_random_uuid()::text, '-', '')";

/**
 * An INSERT (for a CTE) of one delivery per endpoint of each row's wallet subscribed to its event,
 * and of an execution event to the execution's callback if it named one; `source` names a CTE with
 * the columns (execution_id, wallet, event). An event already queued for an endpoint (or a
 * callback) adds nothing: each is delivered once.
 */
export function queueDeliveriesSql(source: string): string {
  return `INSERT INTO webhook_deliveries (id, endpoint_id, event, execution_id)
     SELECT ${MESSAGE_ID_SQL}, w.id, s.event, s.execution_id
       FROM ${source} s JOIN webhook_endpoints w ON w.wallet = s.wallet AND s.event = ANY (w.events)
     UNION ALL
     SELECT ${MESSAGE_ID_SQL}, NULL, s.event, s.execution_id
       FROM ${source} s JOIN execution_callbacks c ON c.execution_id = s.execution_id
      WHERE s.event LIKE 'execution.%'
     ON CONFLICT DO NOTHING`;
}
