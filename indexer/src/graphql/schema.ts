// The schema: each type's definitions and resolvers come from its own file.
import { createSchema } from "graphql-yoga";

import { agentResolvers, AGENT_TYPE_DEFS } from "./agent.js";
import { CONNECTION_TYPE_DEFS } from "./connection.js";
import type { GraphQLContext } from "./context.js";
import { executionResolvers, EXECUTION_TYPE_DEFS } from "./execution.js";
import { indexerResolvers, INDEXER_TYPE_DEFS } from "./indexer-status.js";
import { marketResolvers, MARKET_TYPE_DEFS } from "./market.js";
import { subscriptionResolvers, SUBSCRIPTION_TYPE_DEFS } from "./subscription.js";
import { MONEY_TYPE_DEFS } from "./money.js";
import { receiptProofResolvers, RECEIPT_PROOF_TYPE_DEFS } from "./receipt-proof.js";
import { usageResolvers, USAGE_TYPE_DEFS } from "./usage.js";

const QUERY_TYPE_DEFS = /* GraphQL */ `
  type Query {
    indexer: IndexerStatus!
    agent(address: String!): Agent
    agents(first: Int = 20, after: String, creator: String): AgentConnection!
    execution(id: ID!): Execution
    executions(first: Int = 20, after: String, filter: ExecutionFilter): ExecutionConnection!
    usage(dimension: UsageDimension!, subject: String!): Usage!
    creator(address: String!): Creator!
    market: Market!
    disputes(first: Int = 20, after: String, state: DisputeState): ExecutionConnection!
    subscriptions(first: Int = 20, after: String, agent: String, payer: String): AgentSubscriptionConnection!
    "One leaf of an agent's receipt log by its index (u64, decimal), with its proof and dispute: what open_dispute takes."
    receiptProof(agent: String!, leafIndex: String!): ReceiptProof
  }
`;

export function buildSchema() {
  return createSchema<GraphQLContext>({
    typeDefs: [QUERY_TYPE_DEFS, MONEY_TYPE_DEFS, CONNECTION_TYPE_DEFS, INDEXER_TYPE_DEFS, EXECUTION_TYPE_DEFS, AGENT_TYPE_DEFS, USAGE_TYPE_DEFS, MARKET_TYPE_DEFS, SUBSCRIPTION_TYPE_DEFS, RECEIPT_PROOF_TYPE_DEFS],
    resolvers: [
      { Query: { ...indexerResolvers.Query, ...agentResolvers.Query, ...executionResolvers.Query, ...usageResolvers.Query, ...marketResolvers.Query, ...receiptProofResolvers.Query } },
      { Agent: agentResolvers.Agent, AgentStats: agentResolvers.AgentStats },
      { Execution: executionResolvers.Execution },
      { Usage: usageResolvers.Usage },
      { AgentSubscription: marketResolvers.AgentSubscription },
      subscriptionResolvers,
    ],
  });
}
