// Builds the server: GraphQL (graphql-yoga) on /graphql, subscriptions over server-sent events
// on the same path, GraphiQL in development, and the Helius webhook endpoint. `yoga.fetch` serves a request without a socket (what the tests use).
import { createYoga, type Plugin, type YogaServerInstance } from "graphql-yoga";

import type { ChangeFeed } from "./change-feed.js";
import type { Pool } from "./db/pool.js";
import { createContext, type GraphQLContext, type ServerState } from "./graphql/context.js";
import { checkQueryLimits, DEFAULT_LIMITS, noIntrospectionRule, type QueryLimits } from "./graphql/limits.js";
import { buildSchema } from "./graphql/schema.js";
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
  nowSecs?: () => number;
}

export type IndexerYoga = YogaServerInstance<object, GraphQLContext>;

function limitsPlugin(limits: QueryLimits): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refused = checkQueryLimits(args.document, args.operationName, (args.variableValues ?? {}) as Record<string, unknown>, limits);
      if (refused) setResultAndStopExecution({ errors: [refused] });
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
  };
  const plugins: Plugin[] = [webhookPlugin({ store: options.store, rpc: options.rpc }, options.heliusWebhookAuth), limitsPlugin(options.limits ?? DEFAULT_LIMITS)];
  if (options.production) plugins.push(introspectionPlugin());
  return createYoga<object, GraphQLContext>({
    schema: buildSchema(),
    context: () => createContext(state),
    graphiql: !options.production,
    landingPage: false,
    graphqlEndpoint: "/graphql",
    plugins,
  }) as unknown as IndexerYoga;
}
