import { strict as assert } from "node:assert";

import { ed25519Sign } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { Keypair } from "@solana/web3.js";

import { bearer, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

const bs58 = utils.bytes.bs58;

describe("Sign-In With Solana", () => {
  let relayer: TestRelayer;
  before(async () => {
    relayer = await startTestRelayer();
  });
  after(async () => {
    await relayer.close();
  });

  async function challenge(wallet: Keypair) {
    const response = await relayer.app.inject({
      method: "POST",
      url: "/v1/auth/nonce",
      payload: { wallet: wallet.publicKey.toBase58() },
    });
    assert.equal(response.statusCode, 201);
    return response.json() as { nonce: string; message: string; issued_at: string; expires_at: string };
  }

  const sign = (wallet: Keypair, message: string) => bs58.encode(ed25519Sign(wallet.secretKey, new TextEncoder().encode(message)));

  const session = (message: string, signature: string) =>
    relayer.app.inject({ method: "POST", url: "/v1/auth/session", payload: { message, signature } });

  it("issues a message bound to the domain, the wallet, the nonce, and its issue and expiry times", async () => {
    const wallet = Keypair.generate();
    const c = await challenge(wallet);
    assert.ok(c.message.startsWith("localhost:8080 wants you to sign in with your Solana account:\n"));
    assert.ok(c.message.includes(`\n${wallet.publicKey.toBase58()}\n`));
    assert.ok(c.message.includes(`\nNonce: ${c.nonce}\n`));
    assert.ok(c.message.includes(`\nIssued At: ${c.issued_at}\n`));
    assert.ok(c.message.endsWith(`\nExpiration Time: ${c.expires_at}`));
    assert.equal(Date.parse(c.expires_at) - Date.parse(c.issued_at), 300_000);
  });

  it("opens a session for a correct signature: bearer token and HttpOnly strict cookie both work", async () => {
    const wallet = Keypair.generate();
    const c = await challenge(wallet);
    const response = await session(c.message, sign(wallet, c.message));
    assert.equal(response.statusCode, 201);
    const body = response.json() as { token: string; wallet: string };
    assert.equal(body.wallet, wallet.publicKey.toBase58());
    assert.match(body.token, /^sess_[1-9A-HJ-NP-Za-km-z]+$/);
    const cookie = String(response.headers["set-cookie"]);
    assert.match(cookie, /am_session=sess_/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);

    const viaBearer = await relayer.app.inject({ method: "GET", url: "/v1/auth/session", headers: bearer(body.token) });
    assert.equal(viaBearer.statusCode, 200);
    assert.equal(viaBearer.json().wallet, wallet.publicKey.toBase58());
    const viaCookie = await relayer.app.inject({ method: "GET", url: "/v1/auth/session", cookies: { am_session: body.token } });
    assert.equal(viaCookie.statusCode, 200);
  });

  it("refuses a signature by another key (forged): invalid_signature, and the nonce stays usable", async () => {
    const wallet = Keypair.generate();
    const c = await challenge(wallet);
    const forged = await session(c.message, sign(Keypair.generate(), c.message));
    assert.equal(forged.statusCode, 401);
    assert.equal(errorOf(forged).code, "invalid_signature");
    assert.equal((await session(c.message, sign(wallet, c.message))).statusCode, 201);
  });

  it("refuses a replayed signature: nonce_used", async () => {
    const wallet = Keypair.generate();
    const c = await challenge(wallet);
    const signature = sign(wallet, c.message);
    assert.equal((await session(c.message, signature)).statusCode, 201);
    const replay = await session(c.message, signature);
    assert.equal(replay.statusCode, 401);
    assert.equal(errorOf(replay).code, "nonce_used");
  });

  it("lets exactly one of concurrent uses of one signature through", async () => {
    const wallet = Keypair.generate();
    const c = await challenge(wallet);
    const signature = sign(wallet, c.message);
    const results = await Promise.all(Array.from({ length: 8 }, () => session(c.message, signature)));
    assert.equal(results.filter((r) => r.statusCode === 201).length, 1);
    assert.ok(results.filter((r) => r.statusCode !== 201).every((r) => errorOf(r).code === "nonce_used"));
  });

  it("refuses an expired nonce: nonce_expired", async () => {
    const wallet = Keypair.generate();
    const c = await challenge(wallet);
    await relayer.services.db.query("UPDATE sign_in_nonces SET expires_at = now() - interval '1 second' WHERE nonce = $1", [c.nonce]);
    const response = await session(c.message, sign(wallet, c.message));
    assert.equal(response.statusCode, 401);
    assert.equal(errorOf(response).code, "nonce_expired");
  });

  it("refuses a message for another domain, an altered message and an unknown nonce", async () => {
    const wallet = Keypair.generate();
    const c = await challenge(wallet);
    const otherDomain = c.message.replace("localhost:8080", "evil.example");
    const r1 = await session(otherDomain, sign(wallet, otherDomain));
    assert.equal(errorOf(r1).code, "sign_in_domain_mismatch");
    assert.equal(r1.statusCode, 401);

    const altered = c.message.replace(/Expiration Time: .*/, "Expiration Time: 2099-01-01T00:00:00.000Z");
    const r2 = await session(altered, sign(wallet, altered));
    assert.equal(r2.statusCode, 400);
    assert.equal(errorOf(r2).code, "invalid_sign_in_message");
    assert.equal(errorOf(r2).param, "message");

    const unknown = c.message.replace(c.nonce, "1111111111111111");
    const r3 = await session(unknown, sign(wallet, unknown));
    assert.equal(errorOf(r3).code, "unknown_nonce");
  });

  it("refuses a wallet that is not an address", async () => {
    const response = await relayer.app.inject({ method: "POST", url: "/v1/auth/nonce", payload: { wallet: "not-a-wallet!" } });
    assert.equal(response.statusCode, 400);
    assert.equal(errorOf(response).code, "validation_failed");
    assert.equal(errorOf(response).param, "wallet");
  });

  it("signs out: the token is refused from the next request on, on every relayer", async () => {
    const token = await signIn(relayer.app);
    const database = new URL(relayer.services.config.database_url).pathname.slice(1);
    const second = await startTestRelayer(
      { API_KEY_HASH_SECRET: relayer.services.config.api_key_hash_secret.toString("hex") },
      database,
    );
    try {
      assert.equal((await second.app.inject({ method: "GET", url: "/v1/auth/session", headers: bearer(token) })).statusCode, 200);
      const out = await relayer.app.inject({ method: "DELETE", url: "/v1/auth/session", headers: bearer(token) });
      assert.equal(out.statusCode, 200);
      for (const app of [relayer.app, second.app]) {
        const after = await app.inject({ method: "GET", url: "/v1/auth/session", headers: bearer(token) });
        assert.equal(after.statusCode, 401);
        assert.equal(errorOf(after).code, "invalid_session");
      }
    } finally {
      await second.close();
    }
  });

  it("needs a session on session routes, and refuses API keys there", async () => {
    const none = await relayer.app.inject({ method: "GET", url: "/v1/keys" });
    assert.equal(none.statusCode, 401);
    assert.equal(errorOf(none).code, "session_required");
    const bogus = await relayer.app.inject({ method: "GET", url: "/v1/keys", headers: bearer("sess_unknown") });
    assert.equal(errorOf(bogus).code, "invalid_session");
  });
});
