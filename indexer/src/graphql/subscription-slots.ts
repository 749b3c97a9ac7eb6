// Bounds on open subscriptions. Each one holds a connection open and is answered again after
// every commit that concerns it, so an unbounded number of them is a way to make the server do
// unbounded work: at most `perClient` from one client address and `total` in all. A refusal says
// which bound was reached; closing a subscription frees its slot.
import { graphqlError } from "./errors.js";
import type { GraphQLError } from "graphql";

export interface SubscriptionBounds {
  total: number;
  perClient: number;
}

export const DEFAULT_SUBSCRIPTION_BOUNDS: SubscriptionBounds = { total: 1_000, perClient: 20 };

export class SubscriptionSlots {
  private open = 0;
  private readonly byClient = new Map<string, number>();

  constructor(private readonly bounds: SubscriptionBounds) {}

  /** A release function for the slot taken, or the error saying which bound is reached. */
  acquire(client: string): (() => void) | GraphQLError {
    const mine = this.byClient.get(client) ?? 0;
    if (this.open >= this.bounds.total) {
      return graphqlError("TOO_MANY_SUBSCRIPTIONS", `the server has ${this.open} open subscriptions, its limit; try again later`, { limit: this.bounds.total, scope: "server" });
    }
    if (mine >= this.bounds.perClient) {
      return graphqlError("TOO_MANY_SUBSCRIPTIONS", `this client has ${mine} open subscriptions; at most ${this.bounds.perClient}: close one first`, {
        limit: this.bounds.perClient,
        scope: "client",
      });
    }
    this.open += 1;
    this.byClient.set(client, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open -= 1;
      const left = (this.byClient.get(client) ?? 1) - 1;
      if (left === 0) this.byClient.delete(client);
      else this.byClient.set(client, left);
    };
  }

  /** Open subscriptions, in all and from `client`. */
  count(client?: string): number {
    return client === undefined ? this.open : (this.byClient.get(client) ?? 0);
  }
}
