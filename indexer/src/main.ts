#!/usr/bin/env node
// Runs the indexer of one network: ingestion and the GraphQL server on INDEXER_HOST:INDEXER_PORT.
// Prints one JSON line once serving, with the GraphQL URL.
import { createServer } from "node:http";

import { installProcessHandlers, reportBackgroundError } from "@agent-market/service";

import { ConfigError, parseConfig } from "./config.js";
import { createIndexer } from "./indexer.js";

installProcessHandlers();
let config;
try {
  config = parseConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}

const indexer = await createIndexer(config);
const server = createServer(indexer.yoga);
server.listen(config.port, config.host, () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const graphqlUrl = `http://${config.host}:${port}/graphql`;
  console.log(JSON.stringify({ graphqlUrl, network: config.network, graphiql: !config.production }));
});

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    server.close();
    indexer
      .close()
      .then(() => process.exit(0))
      .catch((err) => {
        reportBackgroundError("stopping", err);
        process.exit(1);
      });
  });
}
