// Live updates, served over server-sent events by graphql-yoga (`Accept: text/event-stream`):
// an agent after each commit that changes it (one agent, or any of a list: a creator's screen
// follows all its agents on one stream), an agent when its status changes, and an execution
// after each change of its row. Changes come from the writer's notices (change-feed.ts),
// so a serve-only indexer of the network serves them too; each one is answered from the tables
// as they are after it.
import type { ExecutionChange } from "../ingest/change-notice.js";
import { agentStatus } from "./agent.js";
import { ChangeQueue, keepOnly } from "./change-queue.js";
import type { GraphQLContext } from "./context.js";
import { graphqlError } from "./errors.js";
import type { Resolvers } from "./generated/resolvers.js";

export const SUBSCRIPTION_TYPE_DEFS = /* GraphQL */ `
  type ExecutionUpdate {
    id: ID!
    "The execution's events were on a dropped fork: it no longer exists."
    removed: Boolean!
    "The execution as it is now; null once removed."
    execution: Execution
  }

  type Subscription {
    "The agent after every commit that changed its record or any of its executions: status and figures as they now are."
    agentUpdated(address: String!): Agent
    "Each agent of the list (1 to 100 addresses, a creator's agents, say) after every commit that changed its record or any of its executions."
    agentsUpdated(addresses: [String!]!): Agent
    "The agent each time its status differs from the one last sent (at first, the one when subscribing)."
    agentStatusChanged(address: String!): Agent
    "An execution after each change of its row (state, amounts, dispute, commitment) and at its removal; by id, by payer, or both."
    executionUpdated(id: ID, payer: String): ExecutionUpdate!
  }
`;

function agentChanges(ctx: GraphQLContext, address: string): ChangeQueue<true> {
  const queue: ChangeQueue<true> = new ChangeQueue(() => stop());
  const stop = ctx.feed.onAgent(address, () => queue.push("agent", true));
  return queue;
}

/** Addresses one agentsUpdated may follow: a browser holds few streams, a creator may hold many agents. */
export const MAX_AGENTS_PER_SUBSCRIPTION = 100;

/** Any of `addresses` changed: the queue holds one pending change per agent, keyed by its address. */
function anyAgentChanges(ctx: GraphQLContext, addresses: string[]): ChangeQueue<string> {
  const unique = [...new Set(addresses)];
  if (unique.length === 0 || unique.length > MAX_AGENTS_PER_SUBSCRIPTION) {
    throw graphqlError("BAD_USER_INPUT", `agentsUpdated follows 1 to ${MAX_AGENTS_PER_SUBSCRIPTION} agents, not ${unique.length}`, { argument: "addresses" });
  }
  const queue: ChangeQueue<string> = new ChangeQueue(() => stops.forEach((stop) => stop()));
  const stops = unique.map((address) => ctx.feed.onAgent(address, () => queue.push(address, address)));
  return queue;
}

/** Each event is read afresh: the subscription's context outlives one answer. */
function currentAgent(_: unknown, args: { address: string }, ctx: GraphQLContext) {
  ctx.renew();
  return ctx.loaders.agent.load(args.address);
}

export const subscriptionResolvers = {
  Subscription: {
    agentUpdated: {
      subscribe: (_: unknown, args: { address: string }, ctx: GraphQLContext) => agentChanges(ctx, args.address),
      resolve: currentAgent,
    },
    agentsUpdated: {
      subscribe: (_: unknown, args: { addresses: string[] }, ctx: GraphQLContext) => anyAgentChanges(ctx, args.addresses),
      resolve: (address: string, _: unknown, ctx: GraphQLContext) => currentAgent(undefined, { address }, ctx),
    },
    agentStatusChanged: {
      subscribe: async (_: unknown, args: { address: string }, ctx: GraphQLContext) => {
        const changes = agentChanges(ctx, args.address);
        let last = await agentStatus(ctx, args.address);
        return keepOnly(changes, async () => {
          ctx.renew();
          const status = await agentStatus(ctx, args.address);
          const changed = status !== last;
          last = status;
          return changed;
        });
      },
      resolve: currentAgent,
    },
    executionUpdated: {
      subscribe: (_: unknown, args: { id?: string | null; payer?: string | null }, ctx: GraphQLContext) => {
        if (!args.id && !args.payer) throw graphqlError("BAD_USER_INPUT", "executionUpdated needs an id or a payer", { argument: "id" });
        const queue: ChangeQueue<ExecutionChange> = new ChangeQueue(() => stop());
        const stop = ctx.feed.onExecution((change) => {
          if ((!args.id || change.id === args.id) && (!args.payer || change.payer === args.payer)) queue.push(change.id, change);
        });
        return queue;
      },
      resolve: async (change: ExecutionChange, _: unknown, ctx: GraphQLContext) => {
        ctx.renew();
        return { id: change.id, removed: change.removed, execution: change.removed ? null : await ctx.loaders.execution.load(change.id) };
      },
    },
  },
} satisfies Resolvers;
