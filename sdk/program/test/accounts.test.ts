// Account decoding and fetching, on synthetic accounts encoded with anchor's coder.
import assert from "node:assert/strict";

import BN from "bn.js";
import { PublicKey, type AccountInfo, type Connection } from "@solana/web3.js";

import {
  accountNameOf,
  coder,
  decodeAccount,
  decodeEscrow,
  escrowRef,
  fetchAccount,
  fetchEscrow,
  fetchMarket,
  IDL,
  marketPda,
  PROGRAM_ID,
  toAnchor,
  toHex,
  type AccountName,
} from "../src/index.js";
import { sampleRaw } from "./samples.js";

type Encoder = { encode(value: unknown, buffer: Buffer): number };

/**
 * Anchor's `encode` writes into a 1,000-byte buffer; the receipt log is larger, so it is encoded
 * with its own layout into a buffer of its size.
 */
async function accountBytes(name: AccountName, raw: unknown): Promise<Buffer> {
  const size = coder.accounts.size(name);
  if (size <= 1000) return coder.accounts.encode(name, raw);
  const layouts = (coder.accounts as unknown as { accountLayouts: Map<string, { layout: Encoder }> }).accountLayouts;
  const buffer = Buffer.alloc(size);
  const length = layouts.get(name)!.layout.encode(raw, buffer);
  return Buffer.concat([coder.accounts.accountDiscriminator(name), buffer.subarray(0, length)]);
}

/** A Connection that only answers getAccountInfo, from a map of accounts. */
function fakeConnection(accounts: Map<string, AccountInfo<Buffer>>): Connection {
  return {
    getAccountInfo: async (address: PublicKey) => accounts.get(address.toBase58()) ?? null,
  } as unknown as Connection;
}

function info(data: Buffer, owner = PROGRAM_ID): AccountInfo<Buffer> {
  return { data, owner, executable: false, lamports: 1_000_000, rentEpoch: 0 };
}

describe("accounts", () => {
  it("IDL account discriminators are SHA-256(\"account:<Name>\")[..8]", async () => {
    const { sha256 } = await import("@noble/hashes/sha2");
    for (const account of IDL.accounts) {
      const expected = sha256(new TextEncoder().encode(`account:${account.name}`)).subarray(0, 8);
      assert.deepEqual(account.discriminator, Array.from(expected), account.name);
    }
  });

  describe("decodeAccount decodes every account of the IDL, losslessly", () => {
    for (const [i, { name }] of IDL.accounts.entries()) {
      it(name, async () => {
        const bytes = await accountBytes(name, sampleRaw({ defined: { name } }, i));
        assert.equal(accountNameOf(bytes), name);
        const decoded = decodeAccount(name, bytes);
        const again = await accountBytes(name, toAnchor({ defined: { name } }, decoded));
        assert.equal(toHex(again), toHex(bytes));
      });
    }
  });

  const escrowRaw: Record<string, unknown> = {
    ...(sampleRaw({ defined: { name: "Escrow" } }, 1) as Record<string, unknown>),
    amount_usdc: new BN("18446744073709551615"),
    deadline: new BN(-5),
  };

  it("decodes an Escrow to camelCase fields with bigint amounts", async () => {
    const escrow = decodeEscrow(await accountBytes("Escrow", escrowRaw));
    assert.equal(escrow.amountUsdc, 18446744073709551615n);
    assert.equal(escrow.deadline, -5n);
    assert.ok(escrow.executionId instanceof Uint8Array && escrow.executionId.length === 16);
    assert.ok((escrowRaw.payer_token_account as PublicKey).equals(escrow.payerTokenAccount));
    assert.deepEqual(escrowRef(escrow), {
      executionId: escrow.executionId,
      agent: escrow.agent,
      payer: escrow.payer,
      payerTokenAccount: escrow.payerTokenAccount,
      rentPayer: escrow.rentPayer,
    });
  });

  it("decodes an Agent's enums and reads accounts padded to their full size", async () => {
    const raw = {
      ...(sampleRaw({ defined: { name: "Agent" } }, 0) as Record<string, unknown>),
      pricing: { PayPerUse: { price_usdc: new BN(250_000) } },
      status: { Retired: {} },
    };
    const bytes = Buffer.concat([await accountBytes("Agent", raw), Buffer.alloc(100)]);
    const agent = decodeAccount("Agent", bytes);
    assert.deepEqual(agent.pricing, { kind: "PayPerUse", priceUsdc: 250_000n });
    assert.equal(agent.status, "Retired");
    assert.equal(typeof agent.maxExecutionSecs, "number");
  });

  it("refuses data of another account type", async () => {
    const bytes = await accountBytes("Escrow", escrowRaw);
    assert.throws(() => decodeAccount("Dispute", bytes), /discriminator/);
    assert.equal(accountNameOf(Buffer.alloc(8)), null);
    assert.equal(accountNameOf(Buffer.alloc(3)), null);
  });

  it("fetches: decoded, null when missing, refused when not the program's", async () => {
    const escrowAddress = new PublicKey(Uint8Array.from({ length: 32 }, (_, i) => i));
    const foreign = new PublicKey(Uint8Array.from({ length: 32 }, (_, i) => 255 - i));
    const escrowData = await accountBytes("Escrow", escrowRaw);
    const marketData = await accountBytes("Market", sampleRaw({ defined: { name: "Market" } }, 4));
    const connection = fakeConnection(
      new Map([
        [escrowAddress.toBase58(), info(escrowData)],
        [marketPda(PROGRAM_ID).toBase58(), info(marketData)],
        [foreign.toBase58(), info(escrowData, new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"))],
      ]),
    );
    assert.deepEqual(await fetchEscrow(connection, escrowAddress, { programId: PROGRAM_ID }), decodeEscrow(escrowData));
    const market = await fetchMarket(connection, undefined, { programId: PROGRAM_ID });
    assert.ok(market);
    assert.equal(market.feeShardBumps.length, 8);
    assert.equal(typeof market.minCollateralUsdc, "bigint");
    assert.equal(await fetchAccount(connection, "Escrow", PROGRAM_ID, { programId: PROGRAM_ID }), null);
    await assert.rejects(fetchEscrow(connection, foreign, { programId: PROGRAM_ID }), /not the program/);
    await assert.rejects(fetchAccount(connection, "Dispute", escrowAddress, { programId: PROGRAM_ID }), /discriminator/);
  });
});
