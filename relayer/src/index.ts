// @agent-market/relayer as a library: the app and its services, for tests, benchmarks and the
// one-command local marketplace.
export { buildApp } from "./app.js";
export { openApiDocument } from "./openapi-document.js";
export type { Services } from "./app-services.js";
export { parseConfig, ConfigError, type RelayerConfig } from "./config.js";
export { createServices, type RunningServices } from "./services.js";
export { reconcile, type ReconcileReport, type Difference } from "./executions/reconcile.js";
export { LookupTables, type LookupTableOptions } from "./chain/lookup-tables.js";
export { REFUND_BATCH_SIZE } from "./executions/refund-batches.js";
export { SETTLE_BATCH_SIZE } from "./executions/settle-batches.js";
export { PriorityFees } from "./chain/priority-fee.js";
export { TransactionSender } from "./chain/tx-sender.js";
export { migrate, type Db } from "./db/database.js";
export { ApiKeyAuthenticator, ApiKeyStore, type AuthenticatedKey } from "./auth/api-keys.js";
export { generateApiKey, parseApiKey, hashApiKey } from "./auth/api-key-format.js";
export { signInMessage, SignInService } from "./auth/sign-in.js";
export { webRunKeyId, WebRunKeys } from "./auth/web-run-keys.js";
export { ERROR_CODES, ApiError, type ErrorCode } from "./errors.js";
export { loggerOptions } from "./logger.js";
