// Builds the server: GraphQL (graphql-yoga) on /graphql, subscriptions over server-sent events
// on the same path, GraphiQL in development, and the Helius webhook endpoint. `yoga.fetch` serves a request without a socket (what the tests use).
import type { DocumentNode, ExecutionResult } from "graphql";
import type { Pool } from "@agent-market/service";
import { createYoga, type Plugin, type YogaServerInstance, type YogaServerOptions } from "graphql-yoga";

import type { ChangeFeed } from "./change-feed.js";
import { compiledQueriesPlugin } from "./graphql/compiled-queries.js";
import { createContext, type GraphQLContext, type ServerState } from "./graphql/context.js";
import { checkQueryLimits, DEFAULT_LIMITS, noIntrospectionRule, type QueryLimits } from "./graphql/limits.js";
import { DEFAULT_REQUEST_BOUNDS, requestBoundsPlugin, type RequestBounds } from "./graphql/request-limits.js";
import { ReceiptTrees } from "./graphql/receipt-trees.js";
import { responseCachePlugin } from "./graphql/response-cache.js";
import { buildSchema } from "./graphql/schema.js";
import type { SubscriptionSlots } from "./graphql/subscription-slots.js";
import type { SolanaRpc } from "./ingest/rpc.js";
import type { EventStore } from "./ingest/store.js";
import { handleHeliusWebhook, WEBHOOK_PATH, type WebhookTarget } from "./webhook/helius.js";

export interface YogaOptions {
  pool: Pool;
  feed: ChangeFeed;
  schema: string;
  network: string;
  production: boolean;
  store: EventStore;
  rpc: SolanaRpc;
  heliusWebhookAuth?: string;
  limits?: QueryLimits;
  requestBounds?: RequestBounds;
  /** How long a query's answer may be served again while nothing changed; 0: never. */
  responseCacheMs: number;
  /** The open subscriptions' bounds and counts: one per server. */
  subscriptions: SubscriptionSlots;
  nowSecs?: () => number;
}

export type IndexerYoga = YogaServerInstance<object, GraphQLContext>;

/** The client a subscription counts against: the socket's peer (behind a proxy, the proxy). */
function clientAddress(context: unknown): string {
  const req = (context as { req?: { socket?: { remoteAddress?: string } } }).req;
  return req?.socket?.remoteAddress ?? "unknown";
}

/**
 * The stream, calling `release` once when it ends: completed, failed, or closed by the client
 * going away (`return`), which is the usual end of a subscription.
 */
function releasingOnEnd(stream: AsyncIterable<ExecutionResult>, release: () => void): AsyncIterableIterator<ExecutionResult> {
  const source = stream[Symbol.asyncIterator]();
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    next: () =>
      source.next().then(
        (result) => {
          if (result.done) release();
          return result;
        },
        (err: unknown) => {
          release();
          throw err;
        },
      ),
    return: (value?: unknown) => {
      release();
      return source.return ? source.return(value) : Promise.resolve({ done: true as const, value: undefined });
    },
    throw: (err?: unknown) => {
      release();
      return source.throw ? source.throw(err) : Promise.reject(err);
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/**
 * Queries and subscriptions pass the same depth, alias and cost limits: a subscription's
 * selection runs again on every update, so it is no cheaper than a query. A subscription then
 * takes a slot, given back when it ends.
 */
function limitsPlugin(limits: QueryLimits, slots: SubscriptionSlots): Plugin {
  const refusal = (args: { document: DocumentNode; operationName?: string | null; variableValues?: unknown }) =>
    checkQueryLimits(args.document, args.operationName, (args.variableValues ?? {}) as Record<string, unknown>, limits);
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refused = refusal(args);
      if (refused) setResultAndStopExecution({ errors: [refused] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refused = refusal(args);
      if (refused) return setResultAndStopExecution({ errors: [refused] });
      const release = slots.acquire(clientAddress(args.contextValue));
      if (typeof release !== "function") return setResultAndStopExecution({ errors: [release] });
      return {
        onSubscribeResult({ result, setResult }) {
          // An answer that is not a stream (the subscription failed at once) holds no slot.
          if (!(Symbol.asyncIterator in Object(result))) {
            release();
            return;
          }
          setResult(releasingOnEnd(result as AsyncIterable<ExecutionResult>, release));
        },
        onSubscribeError: release,
      };
    },
  };
}

function introspectionPlugin(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(noIntrospectionRule);
    },
  };
}

function webhookPlugin(target: WebhookTarget, auth: string | undefined): Plugin {
  return {
    async onRequest({ url, request, endResponse }) {
      if (url.pathname !== WEBHOOK_PATH) return;
      endResponse(await handleHeliusWebhook(request, target, auth));
    },
  };
}

export function buildYoga(options: YogaOptions): IndexerYoga {
  const state: ServerState = {
    pool: options.pool,
    feed: options.feed,
    schema: options.schema,
    network: options.network,
    production: options.production,
    nowSecs: options.nowSecs ?? (() => Math.floor(Date.now() / 1000)),
    sharedReads: { generation: -1, loaders: null },
    receiptTrees: new ReceiptTrees(options.pool, options.schema),
  };
  const plugins: NonNullable<YogaServerOptions<object, GraphQLContext>["plugins"]> = [
    webhookPlugin({ store: options.store, rpc: options.rpc }, options.heliusWebhookAuth),
    requestBoundsPlugin(options.requestBounds ?? DEFAULT_REQUEST_BOUNDS, options.limits ?? DEFAULT_LIMITS),
    limitsPlugin(options.limits ?? DEFAULT_LIMITS, options.subscriptions),
  ];
  // After the limits: a refused query is refused whether or not an answer is kept.
  if (options.responseCacheMs > 0) plugins.push(responseCachePlugin(options.feed, { maxEntries: 2_000, ttlMs: options.responseCacheMs, nowSecs: state.nowSecs }));
  if (options.production) plugins.push(introspectionPlugin());
  plugins.push(compiledQueriesPlugin());
  return createYoga<object, GraphQLContext>({
    schema: buildSchema(),
    context: () => createContext(state),
    graphiql: !options.production,
    landingPage: false,
    graphqlEndpoint: "/graphql",
    plugins,
  }) as unknown as IndexerYoga;
}
