// The creator checklist of a listing, run in order, each step failing with its own code so the
// dashboard can show which one is missing: the on-chain account and its terms, the collateral, a
// public endpoint, and a conformance probe answered with a correctly signed, schema-valid result.
import { randomBytes } from "node:crypto";

import {
  EXECUTE_PROTOCOL_VERSION,
  formatExecutionId,
  listingHash,
  MAX_ENDPOINT_LEN,
  parseSigningKeyProof,
  PROBE_AMOUNT_USDC,
  PROBE_TASK,
  requestHash,
  toHex,
  verifySigningKeyProof,
  type Agent,
  type CreatorExecuteRequest,
  formatUsdc,
  type NetworkName,
} from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import type { RelayerConfig } from "../config.js";
import type { CreatorClient } from "../creator/creator-client.js";
import { ApiError } from "../errors.js";
import { checkSchema, sampleFor, validateAgainst } from "./json-schema.js";
import { pricingFromChain, samePricing, type PricingWire } from "./pricing.js";

export interface ListingInput {
  network: NetworkName;
  agent: string;
  name: string;
  description: string;
  tags: string[];
  input_schema: object;
  output_schema: object;
  endpoint: string;
  signing_key: string;
  pricing: PricingWire;
  probe?: { task?: string; parameters?: Record<string, unknown> };
}

/** What a probe needs: the endpoint, its key and schemas, and the agent's time limit. */
type ProbeInput = Pick<ListingInput, "network" | "agent" | "endpoint" | "signing_key" | "input_schema" | "output_schema" | "probe"> & {
  max_execution_secs: number;
};

/**
 * What POST /v1/agents/conformance takes: a probe without caller-chosen task or parameters, and
 * the signing key's proof for the agent and the session's wallet unless the agent is on chain
 * already, registered by that wallet with that key.
 */
export type ConformanceInput = Omit<ProbeInput, "probe"> & { key_proof?: string };

export interface Verified {
  agent: Agent;
  listing_hash: Uint8Array;
  minimum_collateral_usdc: bigint;
  probe_latency_ms: number;
}

export class ListingChecks {
  constructor(
    private readonly chain: ChainService,
    private readonly creators: CreatorClient,
    private readonly config: Pick<
      RelayerConfig,
      "endpoint_policy" | "schema_limit_bytes" | "probe_timeout_ms" | "probe_max_response_bytes"
    >,
  ) {}

  /** Runs the whole checklist on `input` for `wallet`; throws the first failing step's error. */
  async verify(wallet: string, input: ListingInput): Promise<Verified> {
    checkSchema(input.input_schema, "input_schema", this.config.schema_limit_bytes, true);
    checkSchema(input.output_schema, "output_schema", this.config.schema_limit_bytes, false);
    this.checkEndpointUrl(input.endpoint);
    const signingKey = parseAddress(input.signing_key, "signing_key");
    const address = parseAddress(input.agent, "agent");

    const agent = await this.chain.agent(input.network, address);
    if (!agent) throw new ApiError("agent_not_on_chain", `No agent account ${input.agent} on ${input.network}.`, "agent");
    if (agent.creator.toBase58() !== wallet) {
      throw new ApiError("not_agent_creator", `Agent ${input.agent} was registered by another wallet.`, "agent");
    }
    if (agent.status !== "Active") throw new ApiError("agent_retired_on_chain", undefined, "agent");
    if (!Buffer.from(agent.signingKey).equals(signingKey.toBuffer())) {
      throw new ApiError(
        "signing_key_mismatch",
        `The agent account's signing key is ${new PublicKey(agent.signingKey).toBase58()}.`,
        "signing_key",
      );
    }
    const onChainPricing = pricingFromChain(agent.pricing);
    if (!samePricing(onChainPricing, input.pricing)) {
      throw new ApiError("pricing_mismatch", `The agent account's pricing is ${JSON.stringify(onChainPricing)}.`, "pricing", {
        on_chain: onChainPricing,
      });
    }
    if (agent.endpoint !== input.endpoint) {
      throw new ApiError("endpoint_mismatch", `The agent account's endpoint is ${agent.endpoint}.`, "endpoint");
    }
    const hash = listingHash(input);
    if (!Buffer.from(agent.listingHash).equals(Buffer.from(hash))) {
      throw new ApiError(
        "listing_hash_mismatch",
        `SHA-256 of this listing's canonical JSON is ${toHex(hash)}; the agent account holds ${toHex(agent.listingHash)}.`,
        undefined,
        { listing_hash: toHex(hash), on_chain: toHex(agent.listingHash) },
      );
    }
    // Read afresh: a listing is checked once, against the minimum the market holds now.
    const minimum = (await this.chain.market(input.network, 0)).minCollateralUsdc;
    if (agent.collateralUsdc < minimum) {
      throw new ApiError(
        "collateral_below_minimum",
        `The agent locks ${formatUsdc(agent.collateralUsdc)} USDC; the minimum is ${formatUsdc(minimum)} USDC.`,
        undefined,
        { collateral_usdc: formatUsdc(agent.collateralUsdc), minimum_collateral_usdc: formatUsdc(minimum) },
      );
    }
    // The log its settlements append to, whose rent the creator pays at registration: listing an
    // agent without one would leave the relayer to pay it at the first settlement.
    if (!(await this.chain.hasReceiptLog(input.network, address))) {
      throw new ApiError(
        "receipt_log_missing",
        `Agent ${input.agent} has no receipt log: send create_receipt_log for it, signed and paid by the creator (about 0.052 SOL of rent, held for the agent's life).`,
        "agent",
      );
    }
    const probe_latency_ms = await this.probe({ ...input, max_execution_secs: agent.maxExecutionSecs });
    return { agent, listing_hash: hash, minimum_collateral_usdc: minimum, probe_latency_ms };
  }

  /**
   * The endpoint and interface steps alone, before anything is on chain: the same probe a listing
   * runs, for an agent address the creator is about to register, so a wrong key or an unreachable
   * service is found before collateral is locked. Only the key's holder, as `wallet`, may have
   * the marketplace send it (see requireKeyHolder), and only the fixed probe task, with
   * parameters built from the input schema: never work of the caller's choosing.
   */
  async conformance(wallet: string, input: ConformanceInput): Promise<number> {
    checkSchema(input.input_schema, "input_schema", this.config.schema_limit_bytes, true);
    checkSchema(input.output_schema, "output_schema", this.config.schema_limit_bytes, false);
    this.checkEndpointUrl(input.endpoint);
    const signingKey = parseAddress(input.signing_key, "signing_key");
    const agent = parseAddress(input.agent, "agent");
    await this.requireKeyHolder(wallet, input, agent, signingKey);
    return this.probe({ ...input, probe: undefined });
  }

  /**
   * The caller holds the signing key and acts as the agent's creator: the agent is on chain under
   * `wallet` with this very key (proven at registration), or `key_proof` is the key's signature
   * over the signing-key proof of this agent and `wallet`. Otherwise anyone could have the
   * marketplace sign requests to a stranger's service.
   */
  private async requireKeyHolder(wallet: string, input: ConformanceInput, agent: PublicKey, signingKey: PublicKey): Promise<void> {
    if (input.key_proof !== undefined) {
      const proof = parseSigningKeyProof(input.key_proof);
      if (!proof || !verifySigningKeyProof(proof, signingKey.toBytes(), agent, new PublicKey(wallet))) {
        throw new ApiError("invalid_key_proof", undefined, "key_proof");
      }
      return;
    }
    const onChain = await this.chain.agent(input.network, agent);
    if (onChain && onChain.creator.toBase58() !== wallet) {
      throw new ApiError("not_agent_creator", `Agent ${input.agent} was registered by another wallet.`, "agent");
    }
    if (!onChain || !Buffer.from(onChain.signingKey).equals(signingKey.toBuffer())) {
      throw new ApiError("key_proof_required", undefined, "key_proof");
    }
  }

  /** A marketplace-signed test request; the answer must verify exactly as a paid call's would. */
  private async probe(input: ProbeInput): Promise<number> {
    const parameters = input.probe?.parameters ?? sampleFor(input.input_schema);
    if (parameters === null || typeof parameters !== "object" || Array.isArray(parameters)) {
      throw new ApiError("probe_parameters_unavailable", undefined, "probe.parameters");
    }
    const violation = validateAgainst(input.input_schema, parameters);
    if (violation) {
      throw new ApiError(
        "validation_failed",
        `probe.parameters${violation.path} ${violation.message}`,
        `probe.parameters${violation.path.replaceAll("/", ".")}`,
      );
    }
    const task = input.probe?.task ?? PROBE_TASK;
    const timeout_ms = Math.min(this.config.probe_timeout_ms, input.max_execution_secs * 1000);
    const request: CreatorExecuteRequest = {
      protocol_version: EXECUTE_PROTOCOL_VERSION,
      execution_id: formatExecutionId(randomBytes(16)),
      agent: input.agent,
      network: input.network,
      // An escrow that cannot exist: the default address (the system program's) signs no token
      // approval, so no escrow is ever opened from it, and the probe's signature settles nothing.
      escrow_nonce: "0",
      payer: PublicKey.default.toBase58(),
      payer_token_account: PublicKey.default.toBase58(),
      amount_usdc: PROBE_AMOUNT_USDC,
      task,
      parameters: parameters as Record<string, unknown>,
      request_hash: toHex(requestHash(task, parameters)),
      deadline: new Date(Date.now() + timeout_ms).toISOString(),
    };
    const outcome = await this.creators.call({
      endpoint: input.endpoint,
      request,
      signing_key: new PublicKey(input.signing_key).toBytes(),
      output_schema: input.output_schema,
      timeout_ms,
      max_response_bytes: this.config.probe_max_response_bytes,
    });
    if (outcome.ok) return outcome.latency_ms;
    const message = `Conformance probe: ${outcome.message}.`;
    switch (outcome.failure) {
      case "endpoint_not_allowed":
        throw new ApiError("endpoint_not_allowed", message, "endpoint");
      case "unreachable":
      case "timeout":
        throw new ApiError("endpoint_unreachable", message, "endpoint");
      case "http_error":
        throw new ApiError("probe_http_error", message, undefined, {
          status: outcome.status,
          ...(outcome.service_error ? { service_code: outcome.service_error.code, service_message: outcome.service_error.message } : {}),
        });
      case "response_too_large":
      case "invalid_response":
        throw new ApiError("probe_invalid_response", message);
      case "bad_signature":
        throw new ApiError("probe_bad_signature", message);
      case "output_invalid":
        throw new ApiError("probe_output_invalid", message);
    }
  }

  private checkEndpointUrl(endpoint: string): void {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new ApiError("validation_failed", "endpoint is not an absolute URL.", "endpoint");
    }
    if (Buffer.byteLength(endpoint) > MAX_ENDPOINT_LEN) {
      throw new ApiError("validation_failed", `endpoint is longer than ${MAX_ENDPOINT_LEN} bytes.`, "endpoint");
    }
    const allowed = this.config.endpoint_policy === "development" ? ["https:", "http:"] : ["https:"];
    if (!allowed.includes(url.protocol) || url.username !== "" || url.password !== "" || url.hash !== "") {
      throw new ApiError(
        "endpoint_not_allowed",
        `endpoint must be an ${allowed.join(" or ")} URL without credentials or fragment.`,
        "endpoint",
      );
    }
  }
}

function parseAddress(text: string, param: string): PublicKey {
  try {
    const key = new PublicKey(text);
    if (key.toBase58() === text) return key;
  } catch {
    // falls through to the error below
  }
  throw new ApiError("validation_failed", `${param} is not a base58 Solana address.`, param);
}
