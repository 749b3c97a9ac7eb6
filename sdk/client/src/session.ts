// The wallet's side of the API: Sign-In With Solana, then API keys, the USDC allowance, webhooks and
// agent listings, which an API key can never touch. The signer is anything that signs bytes
// with the wallet's Ed25519 key: a browser wallet adapter, or a Keypair in a script.
import { base58Encode } from "./base58.js";
import { paginate } from "./client.js";
import { Transport } from "./http.js";
import { SessionDisputes } from "./session-disputes.js";
import { SessionWebhooks } from "./session-webhooks.js";
import type {
  Agent,
  ApiKey,
  ApiKeyCreateParams,
  ConformanceParams,
  ConformanceResult,
  CreatedApiKey,
  ListingCreateParams,
  ListingUpdateParams,
  Marketplace,
  Network,
  Page,
  PageParams,
  Session,
  UnsignedTransaction,
  WalletFunding,
  WebRuns,
} from "./types.js";

export interface WalletSigner {
  /** Base58, or anything with toBase58() (a web3.js PublicKey). */
  publicKey: string | { toBase58(): string };
  /** An Ed25519 signature (64 bytes) over `message` by the wallet's key. */
  signMessage(message: Uint8Array): Promise<Uint8Array> | Uint8Array;
}

export interface SessionOptions {
  fetch?: typeof fetch;
  maxRetries?: number;
  timeoutMs?: number;
}

const segment = (id: string) => encodeURIComponent(id);

export class SessionKeys {
  constructor(private readonly transport: Transport) {}

  /** A new API key; its `secret` is in this answer only. */
  async create(params: ApiKeyCreateParams): Promise<CreatedApiKey> {
    // Not replayable: a repeat after a lost answer would mint a second key.
    const { body } = await this.transport.request<CreatedApiKey>({ method: "POST", path: "/v1/keys", body: params, replayable: false });
    return body;
  }

  async list(params: PageParams = {}): Promise<Page<ApiKey>> {
    const { body } = await this.transport.request<Page<ApiKey>>({ method: "GET", path: "/v1/keys", query: { ...params }, replayable: true });
    return body;
  }

  pages(params: PageParams = {}): AsyncGenerator<Page<ApiKey>, void, undefined> {
    return paginate((p) => this.list(p), params);
  }

  async get(keyId: string): Promise<ApiKey> {
    const { body } = await this.transport.request<ApiKey>({ method: "GET", path: `/v1/keys/${segment(keyId)}`, replayable: true });
    return body;
  }

  /** Refused from the very next request on; executions already running finish. */
  async revoke(keyId: string): Promise<ApiKey> {
    const { body } = await this.transport.request<ApiKey>({ method: "DELETE", path: `/v1/keys/${segment(keyId)}`, replayable: true });
    return body;
  }
}

export class SessionWallet {
  constructor(private readonly transport: Transport) {}

  /** USDC balance and the allowance given to the program's delegate. */
  async funding(network: Network = "devnet"): Promise<WalletFunding> {
    const { body } = await this.transport.request<WalletFunding>({
      method: "GET",
      path: "/v1/wallet/funding",
      query: { network },
      replayable: true,
    });
    return body;
  }

  /**
   * The unsigned approveChecked that sets the allowance (replacing any earlier one); without
   * amount_usdc, the sum of the spending caps of the wallet's keys on that network. The wallet
   * signs and sends it itself.
   */
  async allowanceTransaction(params: { network: Network; amount_usdc?: string }): Promise<UnsignedTransaction> {
    const { body } = await this.transport.request<UnsignedTransaction>({
      method: "POST",
      path: "/v1/wallet/allowance",
      body: params,
      replayable: true,
    });
    return body;
  }

  /** Whether the wallet's session may run agents on `network`, and the cap of those web runs. */
  async webRuns(network: Network = "devnet"): Promise<WebRuns> {
    const { body } = await this.transport.request<WebRuns>({
      method: "GET",
      path: "/v1/wallet/web-runs",
      query: { network },
      replayable: true,
    });
    return body;
  }

  /**
   * Sets the web-run cap (`spending_cap_usdc`, counted from the first web run), or revokes web
   * runs (`enabled: false`, refused from the next request on) and enables them again. Raising the
   * cap or enabling needs `signer`, the wallet: it signs the message the API issues for this very
   * change (PermissionError `wallet_signature_required` without it); lowering or revoking does not.
   */
  async updateWebRuns(params: { network: Network; spending_cap_usdc?: string; enabled?: boolean }, signer?: Pick<WalletSigner, "signMessage">): Promise<WebRuns> {
    let confirmation: { message: string; signature: string } | undefined;
    if (signer) {
      const issued = await this.transport.request<{ message: string }>({
        method: "POST",
        path: "/v1/wallet/web-runs/confirmation",
        body: params,
        replayable: true,
      });
      const signature = await signer.signMessage(new TextEncoder().encode(issued.body.message));
      if (!(signature instanceof Uint8Array) || signature.length !== 64) throw new TypeError("signMessage must return the 64-byte Ed25519 signature");
      confirmation = { message: issued.body.message, signature: base58Encode(signature) };
    }
    const { body } = await this.transport.request<WebRuns>({
      method: "PATCH",
      path: "/v1/wallet/web-runs",
      body: confirmation ? { ...params, confirmation } : params,
      // Signed, it is single-use: a repeat that landed would only fail with invalid_confirmation.
      replayable: confirmation === undefined,
    });
    return body;
  }

  /** The unsigned SPL Token revoke of the allowance. */
  async revokeTransaction(params: { network: Network }): Promise<UnsignedTransaction> {
    const { body } = await this.transport.request<UnsignedTransaction>({
      method: "POST",
      path: "/v1/wallet/allowance/revoke",
      body: params,
      replayable: true,
    });
    return body;
  }
}

export class SessionListings {
  constructor(private readonly transport: Transport) {}

  /**
   * Lists an agent registered on-chain; the relayer runs the creator checklist, a ListingError's
   * `code` names the step that failed.
   */
  async create(params: ListingCreateParams): Promise<Agent> {
    const { body } = await this.transport.request<Agent>({ method: "POST", path: "/v1/agents", body: params, replayable: false });
    return body;
  }

  /**
   * The listing's endpoint and interface checks alone, for an agent not registered yet, so a
   * creator learns of a dead endpoint or a wrong key before locking collateral; a ListingError's
   * `code` names the step that failed.
   */
  async conformance(params: ConformanceParams): Promise<ConformanceResult> {
    const { body } = await this.transport.request<ConformanceResult>({ method: "POST", path: "/v1/agents/conformance", body: params, replayable: true });
    return body;
  }

  /** Fields left out keep their values; the merged listing goes through the checklist again. */
  async update(agentId: string, params: ListingUpdateParams, options: { network?: Network } = {}): Promise<Agent> {
    const { body } = await this.transport.request<Agent>({
      method: "PATCH",
      path: `/v1/agents/${segment(agentId)}`,
      query: { ...options },
      body: params,
      replayable: false,
    });
    return body;
  }

  pause(agentId: string, options: { network?: Network } = {}): Promise<Agent> {
    return this.transition(agentId, "pause", options);
  }

  resume(agentId: string, options: { network?: Network } = {}): Promise<Agent> {
    return this.transition(agentId, "resume", options);
  }

  retire(agentId: string, options: { network?: Network } = {}): Promise<Agent> {
    return this.transition(agentId, "retire", options);
  }

  private async transition(agentId: string, action: string, options: { network?: Network }): Promise<Agent> {
    const { body } = await this.transport.request<Agent>({
      method: "POST",
      path: `/v1/agents/${segment(agentId)}/${action}`,
      query: { ...options },
      // Each moves the listing to one fixed status, so a repeat lands in the same place.
      replayable: true,
    });
    return body;
  }
}

export class WalletSession {
  readonly keys: SessionKeys;
  readonly wallet: SessionWallet;
  readonly listings: SessionListings;
  readonly disputes: SessionDisputes;
  readonly webhooks: SessionWebhooks;
  private readonly transport: Transport;

  private constructor(
    readonly baseUrl: string,
    /** `sess_…`: a bearer credential for the wallet's settings; keep it secret. */
    readonly token: string,
    readonly session: Session,
    options: SessionOptions,
  ) {
    this.transport = new Transport({ ...options, baseUrl, authorization: `Bearer ${token}` });
    this.keys = new SessionKeys(this.transport);
    this.wallet = new SessionWallet(this.transport);
    this.listings = new SessionListings(this.transport);
    this.disputes = new SessionDisputes(this.transport);
    this.webhooks = new SessionWebhooks(this.transport);
  }

  /** The wallet's address (base58). */
  get address(): string {
    return this.session.wallet;
  }

  /** Sign-In With Solana: the wallet signs the API's challenge message, which opens a session. */
  static async signIn(baseUrl: string, signer: WalletSigner, options: SessionOptions = {}): Promise<WalletSession> {
    const wallet = typeof signer.publicKey === "string" ? signer.publicKey : signer.publicKey.toBase58();
    const anonymous = new Transport({ ...options, baseUrl });
    const challenge = await anonymous.request<{ message: string }>({
      method: "POST",
      path: "/v1/auth/nonce",
      body: { wallet },
      replayable: true,
    });
    const signature = await signer.signMessage(new TextEncoder().encode(challenge.body.message));
    if (!(signature instanceof Uint8Array) || signature.length !== 64) {
      throw new TypeError("signMessage must return the 64-byte Ed25519 signature");
    }
    // Not replayable: the nonce is single-use, so a repeat could only fail with nonce_used.
    const opened = await anonymous.request<Session & { token: string }>({
      method: "POST",
      path: "/v1/auth/session",
      body: { message: challenge.body.message, signature: base58Encode(signature) },
      replayable: false,
    });
    const { token, ...session } = opened.body;
    return new WalletSession(anonymous.baseUrl, token, session, options);
  }

  /** A session from a stored token, checked with the API (AuthenticationError once it expired). */
  static async resume(baseUrl: string, token: string, options: SessionOptions = {}): Promise<WalletSession> {
    const transport = new Transport({ ...options, baseUrl, authorization: `Bearer ${token}` });
    const { body } = await transport.request<Session>({ method: "GET", path: "/v1/auth/session", replayable: true });
    return new WalletSession(transport.baseUrl, token, body, options);
  }

  async marketplace(): Promise<Marketplace> {
    const { body } = await this.transport.request<Marketplace>({ method: "GET", path: "/v1/marketplace", replayable: true });
    return body;
  }

  /** Revokes the token at once, whichever relayer the next request reaches. */
  async signOut(): Promise<Session> {
    // Not replayable: had the first attempt landed, a repeat would fail with invalid_session.
    const { body } = await this.transport.request<Session>({ method: "DELETE", path: "/v1/auth/session", replayable: false });
    return body;
  }

  /** Revokes every session of the wallet (this one too), in every browser and CLI, at once. */
  async signOutEverywhere(): Promise<{ wallet: string; revoked_count: number }> {
    const { body } = await this.transport.request<{ wallet: string; revoked_count: number }>({ method: "DELETE", path: "/v1/auth/sessions", replayable: false });
    return body;
  }
}
