// @agent-market/service: what the relayer and the indexer share as services.
export { ConfigError, EnvReader, type Env } from "./env.js";
export { createPool, inTransaction, prepared, type Pool, type PoolClient, type PoolOptions, type Queryable } from "./pool.js";
export { migrate, type Migrations } from "./migrate.js";
export { dropDatabase, ensureDatabase } from "./databases.js";
export { createLogger, logOptions, LOG_LEVELS, silentLogger, type Logger, type LogLevel } from "./logger.js";
export { installProcessHandlers, reportBackgroundError } from "./background.js";
export { freePort, freePortBlock } from "./ports.js";
