// The decoder on real transactions from localnet, and on forgeries of them: the event bytes
// alone are not enough; the program id, the event authority and the caller must be right.
import { strict as assert } from "node:assert";

import { eventAuthorityPda, formatExecutionId } from "@agent-market/program";
import { Keypair, type PublicKey } from "@solana/web3.js";

import type { TestMarket } from "@agent-market/tests/fixtures";
import { transactionDecoder, type RawTransaction } from "../src/ingest/decoder.js";
import type { DecodedTransaction } from "../src/ingest/event-row.js";
import { activity, rawTransaction, startEnv, stopEnv, type Activity, type IndexerEnv } from "./support.js";

function clone(raw: RawTransaction): RawTransaction {
  return JSON.parse(JSON.stringify(raw)) as RawTransaction;
}

/** The inner instruction carrying the event (the self-invocation of the program at `programId`). */
function eventInstruction(raw: RawTransaction, programId: PublicKey) {
  const [program, eventAuthority] = [programId.toBase58(), eventAuthorityPda(programId).toBase58()];
  const keys = raw.transaction.message.accountKeys;
  for (const group of raw.meta!.innerInstructions ?? []) {
    for (const ix of group.instructions) {
      if (keys[ix.programIdIndex] === program && ix.accounts.length === 1 && keys[ix.accounts[0]!] === eventAuthority) return { group, ix };
    }
  }
  throw new Error("no event instruction");
}

describe("decoder", function () {
  this.timeout(120_000);
  let env: IndexerEnv | undefined;
  let market: TestMarket;
  let run: Activity;
  let settle: RawTransaction;
  /** The decoder of the chain's program, as the indexer configured for it builds it. */
  let decodeTransaction: (raw: RawTransaction) => DecodedTransaction;

  before(async () => {
    env = await startEnv();
    market = env.market;
    decodeTransaction = transactionDecoder(env.config.program_id);
    run = await activity(market, { settled: 1, refunded: 1, open: 0 });
    settle = await rawTransaction(market, run.signatures[2]!);
  });
  after(() => stopEnv(env));

  it("decodes the emit_cpi! events of real transactions with where they sit", async () => {
    const registered = decodeTransaction(await rawTransaction(market, run.agent.signature));
    assert.equal(registered.failed, false);
    assert.deepEqual(
      registered.events.map((event) => event.name),
      ["AgentRegistered", "ReceiptLogCreated"],
      "registration also creates the receipt log, paid by the creator",
    );
    assert.equal(registered.events[1]!.data.payer, run.agent.creator.wallet.publicKey.toBase58());
    assert.equal(registered.events[0]!.agent, run.agent.address.toBase58());
    assert.equal(registered.events[0]!.data.creator, run.agent.creator.wallet.publicKey.toBase58());

    const opened = decodeTransaction(await rawTransaction(market, run.settled[0]!.signature));
    const open = opened.events.find((event) => event.name === "EscrowOpened")!;
    assert.equal(open.executionId, formatExecutionId(run.settled[0]!.executionId));
    assert.equal(open.data.payer, run.payer.wallet.publicKey.toBase58());
    assert.match(String(open.data.apiKeyId), /^key_/);

    const settled = decodeTransaction(settle);
    const event = settled.events.find((e) => e.name === "EscrowSettledToLog")!;
    assert.equal(event.signature, settle.transaction.signatures[0]);
    assert.equal(event.slot, settle.slot);
    assert.equal(event.blockTime, settle.blockTime);
    assert.equal(event.feeShard, 0, "the shard comes from settle_batch's arguments");
    assert.equal(BigInt(String(event.data.creatorShareUsdc)) + BigInt(String(event.data.feeUsdc)), BigInt(String(event.data.chargedUsdc)), "the split is of the charge");
    assert.deepEqual([event.data.chargedUsdc, event.data.returnedUsdc], [event.data.amountUsdc, "0"], "a fixed-price call is charged its whole amount");
    const { group, ix } = eventInstruction(settle, market.programId);
    assert.equal(event.instructionIndex, group.index);
    assert.equal(event.innerIndex, group.instructions.indexOf(ix));

    const refunded = decodeTransaction(await rawTransaction(market, run.signatures[4]!));
    assert.equal(refunded.events.find((e) => e.name === "EscrowRefunded")!.data.reason, "CreatorError");
  });

  it("decodes the events of the program at the configured id, and only those", () => {
    // The same transaction as the program would run at another address: its id and its event
    // authority (a PDA of that id) in place of the IDL's.
    const other = Keypair.generate().publicKey;
    const moved = clone(settle);
    moved.transaction.message.accountKeys = moved.transaction.message.accountKeys.map((key) =>
      key === market.programId.toBase58() ? other.toBase58() : key === eventAuthorityPda(market.programId).toBase58() ? eventAuthorityPda(other).toBase58() : key,
    );
    const decodeOther = transactionDecoder(other);
    assert.deepEqual(
      decodeOther(moved).events.map((e) => [e.name, e.executionId, e.feeShard]),
      decodeTransaction(settle).events.map((e) => [e.name, e.executionId, e.feeShard]),
    );
    assert.equal(decodeTransaction(moved).events.length, 0, "the chain's decoder ignores another program's events");
    assert.equal(decodeOther(settle).events.length, 0, "another configured id ignores the chain program's events");
  });

  it("gives no event for a failed transaction", () => {
    const failed = clone(settle);
    failed.meta!.err = { InstructionError: [1, { Custom: 6000 }] };
    const decoded = decodeTransaction(failed);
    assert.equal(decoded.failed, true);
    assert.deepEqual(decoded.events, []);
  });

  it("refuses an event instruction to another program", () => {
    const forged = clone(settle);
    const { ix } = eventInstruction(forged, market.programId);
    forged.transaction.message.accountKeys.push("Stake11111111111111111111111111111111111111");
    ix.programIdIndex = forged.transaction.message.accountKeys.length - 1;
    assert.equal(decodeTransaction(forged).events.length, 0);
  });

  it("refuses an event without the event authority as its account", () => {
    const forged = clone(settle);
    const { ix } = eventInstruction(forged, market.programId);
    ix.accounts = [0];
    assert.equal(decodeTransaction(forged).events.length, 0);
    const none = clone(settle);
    eventInstruction(none, market.programId).ix.accounts = [];
    assert.equal(decodeTransaction(none).events.length, 0);
  });

  it("refuses an event the program did not invoke itself (the authority could not have signed)", () => {
    const forged = clone(settle);
    const { group } = eventInstruction(forged, market.programId);
    // The outer instruction now belongs to another program: the self-invocation's caller is not the program.
    forged.transaction.message.accountKeys.push("Stake11111111111111111111111111111111111111");
    forged.transaction.message.instructions[group.index]!.programIdIndex = forged.transaction.message.accountKeys.length - 1;
    assert.equal(decodeTransaction(forged).events.length, 0);
  });

  it("refuses data without the event tag, or with an unknown discriminator", async () => {
    const { utils } = await import("@coral-xyz/anchor");
    const forged = clone(settle);
    const { ix } = eventInstruction(forged, market.programId);
    const bytes = utils.bytes.bs58.decode(ix.data);
    const wrongTag = Uint8Array.from(bytes);
    wrongTag[0] ^= 0xff;
    ix.data = utils.bytes.bs58.encode(wrongTag);
    assert.equal(decodeTransaction(forged).events.length, 0);
    const unknown = Uint8Array.from(bytes);
    unknown[8] ^= 0xff;
    ix.data = utils.bytes.bs58.encode(unknown);
    assert.equal(decodeTransaction(forged).events.length, 0);
  });
});
