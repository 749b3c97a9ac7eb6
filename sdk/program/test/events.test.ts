// Event decoding, both forms, on synthetic events encoded with anchor's coder.
import assert from "node:assert/strict";

import { utils } from "@coral-xyz/anchor";
import BN from "bn.js";
import { sha256 } from "@noble/hashes/sha2";
import {
  Keypair,
  PublicKey,
  TransactionMessage,
  type ParsedTransactionWithMeta,
  type VersionedTransactionResponse,
} from "@solana/web3.js";

import {
  coder,
  decodeCpiEventData,
  decodeEvent,
  EVENT_IX_TAG_LE,
  eventAuthorityPda,
  eventsFromInnerInstructions,
  eventsFromLogs,
  IDL,
  PROGRAM_ID,
  toAnchor,
  toHex,
  type AgentMarketEvent,
  type EventName,
} from "../src/index.js";
import { sampleRaw } from "./samples.js";

const TOKEN_PROGRAM = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");

/** discriminator ‖ Borsh of event `name` with anchor-shaped `raw` fields. */
function eventBytes(name: EventName, raw: unknown): Buffer {
  const discriminator = IDL.events.find((e) => e.name === name)!.discriminator;
  return Buffer.concat([Buffer.from(discriminator), coder.types.encode(name, raw)]);
}

/** Re-encodes a decoded event, to compare with the bytes it came from. */
function reencode(event: AgentMarketEvent): Buffer {
  return eventBytes(event.name, toAnchor({ defined: { name: event.name } }, event.data));
}

const cpiData = (bytes: Uint8Array) => Buffer.concat([Buffer.from(EVENT_IX_TAG_LE), bytes]);

const escrowOpenedRaw = sampleRaw({ defined: { name: "EscrowOpened" } }, 3) as Record<string, unknown>;
const escrowOpened = eventBytes("EscrowOpened", escrowOpenedRaw);
const settledRaw = sampleRaw({ defined: { name: "EscrowsSettledToLog" } }, 5);
const settled = eventBytes("EscrowsSettledToLog", settledRaw);

describe("events", () => {
  it("EVENT_IX_TAG_LE is anchor's tag: SHA-256(\"anchor:event\")[..8], reversed", () => {
    assert.equal(toHex(EVENT_IX_TAG_LE), "e445a52e51cb9a1d");
    const hash = sha256(new TextEncoder().encode("anchor:event")).subarray(0, 8);
    assert.deepEqual(Array.from(EVENT_IX_TAG_LE), Array.from(hash).reverse());
  });

  it("IDL event discriminators are SHA-256(\"event:<Name>\")[..8]", () => {
    for (const event of IDL.events) {
      const expected = sha256(new TextEncoder().encode(`event:${event.name}`)).subarray(0, 8);
      assert.deepEqual(event.discriminator, Array.from(expected), event.name);
    }
  });

  describe("decodeEvent decodes every event of the IDL, losslessly", () => {
    for (const [i, { name }] of IDL.events.entries()) {
      it(name, () => {
        const bytes = eventBytes(name, sampleRaw({ defined: { name } }, i));
        const event = decodeEvent(bytes);
        assert.ok(event);
        assert.equal(event.name, name);
        assert.equal(toHex(reencode(event)), toHex(bytes));
        assert.deepEqual(decodeCpiEventData(cpiData(bytes)), event);
      });
    }
  });

  it("decodes to camelCase fields with bigint amounts, Uint8Array ids and PublicKeys", () => {
    const event = decodeEvent(escrowOpened);
    assert.ok(event && event.name === "EscrowOpened");
    const data = event.data;
    assert.equal(typeof data.amountUsdc, "bigint");
    assert.equal(data.amountUsdc.toString(), (escrowOpenedRaw.amount_usdc as { toString(): string }).toString());
    assert.equal(typeof data.openedAt, "bigint");
    assert.ok(data.executionId instanceof Uint8Array && data.executionId.length === 16);
    assert.ok(data.requestHash instanceof Uint8Array && data.requestHash.length === 32);
    assert.ok(data.agent instanceof PublicKey);
    assert.ok((escrowOpenedRaw.agent as PublicKey).equals(data.agent));
    assert.equal(typeof data.usedIncludedCall, "boolean");
    assert.equal(typeof data.nonce, "bigint");
    assert.deepEqual(Object.keys(data), [
      "executionId",
      "agent",
      "nonce",
      "payer",
      "payerTokenAccount",
      "apiKeyId",
      "amountUsdc",
      "pricePerUnitUsdc",
      "maxUnits",
      "requestHash",
      "usedIncludedCall",
      "openedAt",
      "deadline",
    ]);
  });

  it("decodes enums: unit variants as names, data variants as { kind, ...fields }", () => {
    const refunded = decodeEvent(
      eventBytes("EscrowRefunded", { ...(sampleRaw({ defined: { name: "EscrowRefunded" } }, 0) as object), reason: { OutputInvalid: {} } }),
    );
    assert.ok(refunded?.name === "EscrowRefunded");
    assert.equal(refunded.data.reason, "OutputInvalid");
    const hybrid = { Hybrid: { period_price_usdc: new BN(1), period_secs: 2, included_calls: 3, overage_price_usdc: new BN(4) } };
    const updated = decodeEvent(
      eventBytes("AgentUpdated", { ...(sampleRaw({ defined: { name: "AgentUpdated" } }, 2) as object), pricing: hybrid }),
    );
    assert.ok(updated?.name === "AgentUpdated");
    assert.deepEqual(updated.data.pricing, {
      kind: "Hybrid",
      periodPriceUsdc: 1n,
      periodSecs: 2,
      includedCalls: 3,
      overagePriceUsdc: 4n,
    });
  });

  it("returns null for unknown discriminators and data without the event tag", () => {
    assert.equal(decodeEvent(Buffer.alloc(40)), null);
    assert.equal(decodeCpiEventData(escrowOpened), null);
    assert.equal(decodeCpiEventData(Buffer.from([0xe4, 0x45])), null);
  });

  describe("from logs (\"Program data:\")", () => {
    const program = PROGRAM_ID.toBase58();
    const other = Keypair.generate().publicKey.toBase58();
    const logs = [
      `Program ${program} invoke [1]`,
      "Program log: Instruction: OpenEscrow",
      `Program ${TOKEN_PROGRAM.toBase58()} invoke [2]`,
      "Program log: Instruction: TransferChecked",
      `Program data: ${settled.toString("base64")}`, // logged by another program: not ours
      `Program ${TOKEN_PROGRAM.toBase58()} success`,
      `Program data: ${escrowOpened.toString("base64")}`,
      `Program ${program} consumed 1 of 200000 compute units`,
      `Program ${program} success`,
      `Program ${other} invoke [1]`,
      `Program data: ${settled.toString("base64")}`, // another program: not ours
      `Program ${other} success`,
      `Program ${program} invoke [1]`,
      `Program data: ${settled.toString("base64")}`,
      `Program ${program} success`,
    ];

    it("returns the program's events in order, and only the program's", () => {
      const events = eventsFromLogs(logs, PROGRAM_ID);
      assert.deepEqual(
        events.map((e) => e.name),
        ["EscrowOpened", "EscrowsSettledToLog"],
      );
      assert.deepEqual(events[0], decodeEvent(escrowOpened));
      assert.deepEqual(events[1], decodeEvent(settled));
    });

    it("returns nothing for logs without events", () => {
      assert.deepEqual(eventsFromLogs([`Program ${program} invoke [1]`, "Program log: hi", `Program ${program} success`], PROGRAM_ID), []);
      assert.deepEqual(eventsFromLogs([], PROGRAM_ID), []);
    });
  });

  describe("from emit_cpi! inner instructions", () => {
    const relayer = Keypair.generate().publicKey;
    const eventAuthority = eventAuthorityPda(PROGRAM_ID);
    // A v0 message whose static keys hold the program's accounts; the token program comes
    // from an address lookup table, so its index points past the static keys.
    const message = new TransactionMessage({
      payerKey: relayer,
      recentBlockhash: "11111111111111111111111111111111",
      instructions: [
        {
          programId: PROGRAM_ID,
          keys: [
            { pubkey: relayer, isSigner: true, isWritable: true },
            { pubkey: eventAuthority, isSigner: false, isWritable: false },
          ],
          data: Buffer.alloc(8),
        },
      ],
    }).compileToV0Message();
    const keys = message.staticAccountKeys;
    const at = (key: PublicKey) => keys.findIndex((k) => k.equals(key));
    const tokenIndex = keys.length; // first read-only lookup address

    function response(
      inner: { programIdIndex: number; accounts: number[]; data: string }[],
      err: unknown = null,
    ): VersionedTransactionResponse {
      return {
        slot: 1,
        blockTime: null,
        transaction: { message, signatures: ["1".repeat(64)] },
        meta: {
          err: err as VersionedTransactionResponse["meta"] extends infer M ? (M extends { err: infer E } ? E : never) : never,
          fee: 5000,
          preBalances: [],
          postBalances: [],
          innerInstructions: [{ index: 0, instructions: inner.map((ix) => ({ ...ix, stackHeight: 2 })) }],
          loadedAddresses: { writable: [], readonly: [TOKEN_PROGRAM] },
          logMessages: [],
        },
        version: 0,
      };
    }

    const transfer = { programIdIndex: tokenIndex, accounts: [0], data: utils.bytes.bs58.encode(Buffer.from([12, 1, 2, 3])) };
    const cpi = (bytes: Buffer, authority = eventAuthority) => ({
      programIdIndex: at(PROGRAM_ID),
      accounts: [at(authority) >= 0 ? at(authority) : 0],
      data: utils.bytes.bs58.encode(cpiData(bytes)),
    });

    it("decodes them from a VersionedTransactionResponse, skipping other programs", () => {
      const events = eventsFromInnerInstructions(response([transfer, cpi(escrowOpened), transfer, cpi(settled)]), PROGRAM_ID);
      assert.deepEqual(events, [decodeEvent(escrowOpened), decodeEvent(settled)]);
    });

    it("ignores self-invocations not signed by the event authority, and failed transactions", () => {
      assert.deepEqual(eventsFromInnerInstructions(response([cpi(escrowOpened, relayer)]), PROGRAM_ID), []);
      assert.deepEqual(
        eventsFromInnerInstructions(response([cpi(escrowOpened)], { InstructionError: [0, { Custom: 6001 }] }), PROGRAM_ID),
        [],
      );
      assert.deepEqual(eventsFromInnerInstructions({ transaction: { message }, meta: null }, PROGRAM_ID), []);
    });

    it("orders events by the top-level instruction they came from", () => {
      const tx = response([cpi(settled)]);
      tx.meta!.innerInstructions = [
        { index: 2, instructions: [cpi(settled)] },
        { index: 0, instructions: [cpi(escrowOpened)] },
      ];
      assert.deepEqual(
        eventsFromInnerInstructions(tx, PROGRAM_ID).map((e) => e.name),
        ["EscrowOpened", "EscrowsSettledToLog"],
      );
    });

    it("decodes them from a jsonParsed ParsedTransactionWithMeta", () => {
      const parsed = {
        slot: 1,
        blockTime: null,
        transaction: {
          signatures: ["1".repeat(64)],
          message: {
            accountKeys: keys.map((pubkey) => ({ pubkey, signer: false, writable: false, source: "transaction" as const })),
            instructions: [],
            recentBlockhash: "11111111111111111111111111111111",
          },
        },
        meta: {
          err: null,
          fee: 5000,
          preBalances: [],
          postBalances: [],
          innerInstructions: [
            {
              index: 0,
              instructions: [
                { program: "spl-token", programId: TOKEN_PROGRAM, parsed: { type: "transferChecked", info: {} } },
                { programId: PROGRAM_ID, accounts: [eventAuthority], data: utils.bytes.bs58.encode(cpiData(escrowOpened)) },
              ],
            },
          ],
        },
      } satisfies ParsedTransactionWithMeta;
      assert.deepEqual(eventsFromInnerInstructions(parsed, PROGRAM_ID), [decodeEvent(escrowOpened)]);
    });
  });
});
