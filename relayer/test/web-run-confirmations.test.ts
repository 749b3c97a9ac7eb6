// Web runs narrowed by a session, widened only by the wallet: raising the cap or allowing web runs
// again needs the wallet's fresh signature over that very change, once; a stolen session alone is
// refused with nothing changed. "Sign out everywhere" revokes every session of the wallet.
import { strict as assert } from "node:assert";

import { ed25519Sign } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { Keypair } from "@solana/web3.js";

import { bearer, errorOf, signIn, startTestRelayer, type TestRelayer } from "./support.js";

const sign = (wallet: Keypair, message: string) => utils.bytes.bs58.encode(ed25519Sign(wallet.secretKey, new TextEncoder().encode(message)));

interface WebRuns {
  enabled: boolean;
  spending_cap_usdc: string;
}

describe("web runs: widened only by a fresh wallet signature", () => {
  let relayer: TestRelayer;
  before(async () => {
    relayer = await startTestRelayer();
  });
  after(async () => {
    await relayer.close();
  });

  const patch = (token: string, payload: Record<string, unknown>) =>
    relayer.app.inject({ method: "PATCH", url: "/v1/wallet/web-runs", headers: bearer(token), payload: { network: "devnet", ...payload } });
  const settings = async (token: string) =>
    (await relayer.app.inject({ method: "GET", url: "/v1/wallet/web-runs", headers: bearer(token) })).json() as WebRuns;

  async function confirmation(token: string, change: Record<string, unknown>) {
    const response = await relayer.app.inject({ method: "POST", url: "/v1/wallet/web-runs/confirmation", headers: bearer(token), payload: { network: "devnet", ...change } });
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { statement: string; message: string; nonce: string };
  }

  it("lets a session lower the cap and revoke, and refuses it raising the cap or allowing again: 403 wallet_signature_required, nothing changed", async () => {
    const token = await signIn(relayer.app);
    assert.equal((await patch(token, { spending_cap_usdc: "2.000000" })).statusCode, 200);
    assert.equal((await patch(token, { enabled: false })).statusCode, 200);
    const raise = await patch(token, { spending_cap_usdc: "500.000000" });
    assert.equal(raise.statusCode, 403);
    assert.deepEqual(
      [errorOf(raise).code, errorOf(raise).message, errorOf(raise).param],
      [
        "wallet_signature_required",
        "Agent Market: set the web-run spending cap on devnet to 500.000000 USDC. needs the wallet's signature: POST /v1/wallet/web-runs/confirmation, sign its message, and send it as confirmation.",
        "confirmation",
      ],
    );
    assert.equal(errorOf(await patch(token, { enabled: true })).code, "wallet_signature_required");
    assert.deepEqual(await settings(token), { ...(await settings(token)), enabled: false, spending_cap_usdc: "2.000000" }, "nothing changed");
  });

  it("raises the cap and allows web runs again with the wallet's signature over that very change, once", async () => {
    const wallet = Keypair.generate();
    const token = await signIn(relayer.app, wallet);
    await patch(token, { enabled: false });
    const change = { spending_cap_usdc: "25.000000", enabled: true };
    const issued = await confirmation(token, change);
    assert.equal(issued.statement, "Agent Market: allow web runs on devnet again, and set the web-run spending cap on devnet to 25.000000 USDC.");
    assert.ok(issued.message.startsWith("localhost:8080 asks you to confirm with your Solana account:\n"));
    const signed = { message: issued.message, signature: sign(wallet, issued.message) };

    // Another change than the one signed, another wallet's signature, a forged one: refused, nothing changed.
    const other = await patch(token, { spending_cap_usdc: "900.000000", enabled: true, confirmation: signed });
    assert.deepEqual([other.statusCode, errorOf(other).code], [403, "invalid_confirmation"]);
    assert.match(errorOf(other).message, /states another change than this request's/);
    const stranger = await patch(token, { ...change, confirmation: { message: issued.message, signature: sign(Keypair.generate(), issued.message) } });
    assert.deepEqual([stranger.statusCode, errorOf(stranger).code], [403, "invalid_confirmation"]);
    assert.match(errorOf(stranger).message, /signature does not verify against the wallet's key/);
    assert.deepEqual([(await settings(token)).enabled, (await settings(token)).spending_cap_usdc], [false, "10.000000"]);

    const done = await patch(token, { ...change, confirmation: signed });
    assert.equal(done.statusCode, 200, done.body);
    assert.deepEqual([(done.json() as WebRuns).enabled, (done.json() as WebRuns).spending_cap_usdc], [true, "25.000000"]);
    const replayed = await patch(token, { ...change, confirmation: signed });
    assert.deepEqual([replayed.statusCode, errorOf(replayed).code], [403, "invalid_confirmation"]);
    assert.match(errorOf(replayed).message, /was already used or has expired/);
  });

  it("refuses a confirmation issued to another wallet, and never opens a session with one", async () => {
    const owner = Keypair.generate();
    const thief = Keypair.generate();
    const thiefToken = await signIn(relayer.app, thief);
    const issued = await confirmation(thiefToken, { spending_cap_usdc: "99.000000" });
    const ownerToken = await signIn(relayer.app, owner);
    const refused = await patch(ownerToken, { spending_cap_usdc: "99.000000", confirmation: { message: issued.message, signature: sign(thief, issued.message) } });
    assert.equal(errorOf(refused).code, "invalid_confirmation");
    assert.match(errorOf(refused).message, /was issued to another wallet/);
    const session = await relayer.app.inject({ method: "POST", url: "/v1/auth/session", payload: { message: issued.message, signature: sign(thief, issued.message) } });
    assert.equal(errorOf(session).code, "invalid_sign_in_message");
  });

  it("signs out everywhere: every session of the wallet is refused from then on, other wallets' are not", async () => {
    const wallet = Keypair.generate();
    const tokens = [await signIn(relayer.app, wallet), await signIn(relayer.app, wallet), await signIn(relayer.app, wallet)];
    const bystander = await signIn(relayer.app);
    const out = await relayer.app.inject({ method: "DELETE", url: "/v1/auth/sessions", headers: bearer(tokens[0]!) });
    assert.equal(out.statusCode, 200, out.body);
    assert.deepEqual(out.json(), { object: "sessions_revoked", wallet: wallet.publicKey.toBase58(), revoked_count: 3 });
    for (const token of tokens) {
      const read = await relayer.app.inject({ method: "GET", url: "/v1/auth/session", headers: bearer(token) });
      assert.deepEqual([read.statusCode, errorOf(read).code], [401, "invalid_session"]);
      assert.equal(errorOf(await patch(token, { enabled: false })).code, "invalid_session");
    }
    assert.equal((await relayer.app.inject({ method: "GET", url: "/v1/auth/session", headers: bearer(bystander) })).statusCode, 200);
  });
});
