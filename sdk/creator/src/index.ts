// @agent-market/creator: host an agent on Agent Market with a few lines of code.
export {
  createAgentService,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_REPLAY_CACHE_SIZE,
  keyProof,
  type AgentContext,
  type AgentHandler,
  type AgentService,
  type AgentServiceCore,
  type AgentServiceOptions,
  type ExecuteHttpRequest,
  type JsonSchema,
} from "./service.js";
export {
  errorResponse,
  type ErrorBody,
  type ExecuteErrorCode,
  type HealthBody,
  type SchemaViolation,
  type ServiceResponse,
} from "./responses.js";
export { metered, Metered } from "./metered.js";
export { type ChunkStream, type ServiceStream } from "./stream.js";
export { nodeListener, type NodeListenerOptions } from "./node.js";
export { parseKeypairJson, readKeypairFile } from "./keypair.js";
export {
  DEFAULT_REQUEST_TOLERANCE_SECS,
  REQUEST_SIGNATURE_HEADER,
  listingHash,
  type CreatorExecuteRequest,
  type CreatorExecuteResponse,
  type ListingDocument,
  type MeteredTerms,
  type SignBatchItem,
  type SignBatchRequest,
  type SignBatchResponse,
} from "@agent-market/program";
