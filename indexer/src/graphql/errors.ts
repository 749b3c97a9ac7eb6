// The closed set of error codes a GraphQL answer carries in `extensions.code`.
import { GraphQLError } from "graphql";

export type ErrorCode =
  | "BAD_USER_INPUT"
  | "INVALID_CURSOR"
  | "QUERY_TOO_DEEP"
  | "QUERY_TOO_COSTLY"
  | "TOO_MANY_ALIASES"
  | "TOO_MANY_TOKENS"
  | "INTROSPECTION_DISABLED"
  | "TOO_MANY_SUBSCRIPTIONS"
  | "RECEIPT_LOG_INCOMPLETE"
  | "INTERNAL_SERVER_ERROR";

export function graphqlError(code: ErrorCode, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}
