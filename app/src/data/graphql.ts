// The indexer's GraphQL, read with plain fetch: the dashboard's few queries need no client library.
export class GraphQLError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = "GraphQLError";
  }
}

export async function graphql<T>(url: string | null, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  if (url === null) throw new GraphQLError("This relayer was started without INDEXER_GRAPHQL_URL: usage and status are unavailable.", "not_configured");
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query, variables }),
  }).catch(() => {
    // The browser's own text ("Failed to fetch") names neither the indexer nor what to do.
    throw new GraphQLError("The indexer, where these figures come from, did not answer: it may be stopped or restarting, or this computer is offline.", "unreachable");
  });
  const body = (await response.json().catch(() => null)) as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] } | null;
  if (body?.errors && body.errors.length > 0) {
    const first = body.errors[0]!;
    throw new GraphQLError(first.message, first.extensions?.code);
  }
  if (!response.ok || !body?.data) throw new GraphQLError(`The indexer answered HTTP ${response.status}.`, `http_${response.status}`);
  return body.data;
}
