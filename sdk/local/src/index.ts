// The local marketplace as a library: what `npm start` runs, for tests and benchmarks.
export { rpc, type DemoAgent } from "./demo.js";
export { REPO_ROOT, STOP_BOUNDS_MS, localnetBinary, startLocalMarketplace, type LocalMarketplace, type LocalMarketplaceOptions } from "./marketplace.js";
export { hydrateLibraryLinks, legacyDatabaseMessage, preparePostgres, untilAccepting } from "./postgres.js";
export { Supervisor, type ChildSpec, type Supervised, type SupervisorOptions } from "./supervisor.js";
