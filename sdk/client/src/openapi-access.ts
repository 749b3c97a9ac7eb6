// Reaching into generated/openapi.ts, the types of the relayer's OpenAPI document, by route:
// the answer a status carries, the body a route takes, its query parameters.
import type { paths } from "./generated/openapi.js";

/** The JSON body of `Method` on `Path` answering `Status`. */
export type Answer<Path extends keyof paths, Method extends keyof paths[Path], Status extends number> = paths[Path][Method] extends {
  responses: { [S in Status]: { content: { "application/json": infer Sent } } };
}
  ? Sent
  : never;

/** The JSON body `Method` on `Path` takes. */
export type Body<Path extends keyof paths, Method extends keyof paths[Path]> = paths[Path][Method] extends {
  requestBody?: { content: { "application/json": infer Sent } };
}
  ? Sent
  : never;

/** The query parameters of `Method` on `Path`. */
export type Query<Path extends keyof paths, Method extends keyof paths[Path]> = paths[Path][Method] extends {
  parameters: { query?: infer Params };
}
  ? NonNullable<Params>
  : never;
