// The app as a route sees it. Its type provider reads the route's own JSON schemas: the params,
// query and body a handler receives, and what it may reply, are typed from the schema that
// validates them and makes up the OpenAPI document, so a request's shape is written once.
import type { JsonSchemaToTsProvider } from "@fastify/type-provider-json-schema-to-ts";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";

export type RouteApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  JsonSchemaToTsProvider
>;

export function routeApp(app: FastifyInstance): RouteApp {
  return app.withTypeProvider<JsonSchemaToTsProvider>();
}
