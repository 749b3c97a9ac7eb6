// src/transaction.ts against web3.js: what it compiles, signed and serialized, is what
// Transaction.from reads back, with the header web3.js's own compiler gives.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import {
  Keypair,
  Message,
  PublicKey,
  Transaction,
  TransactionInstruction,
  TransactionMessage,
  VersionedMessage,
  VersionedTransaction,
  type AddressLookupTableAccount,
} from "@solana/web3.js";

import {
  compileLegacyMessage,
  compileV0Message,
  ed25519Sign,
  ed25519Verify,
  fitsTransaction,
  fromHex,
  openEscrowInstruction,
  PACKET_DATA_SIZE,
  PROGRAM_ID,
  refundInstruction,
  serializeTransaction,
  settleBatchInstructions,
  resultDigest,
  subscribeInstruction,
} from "../src/index.js";
import { golden, goldenInputs } from "./golden.js";

const inputs = golden.instructions;
const key = (name: keyof typeof inputs.keys) => new PublicKey(inputs.keys[name]);
const relayer = Keypair.generate();
const creatorSeed = randomBytes(32);
const blockhash = Keypair.generate().publicKey.toBase58();
const { agent, executionId, escrow } = goldenInputs;
const requestHash = fromHex(inputs.request_hash);
const resultHash = fromHex(inputs.result_hash);

/** A batch of one, signed with the call's own signature over its result digest. */
function settle(relayerKey: PublicKey): TransactionInstruction[] {
  const binding = { ...escrow, nonce: 3n, amountUsdc: 250_000n, requestHash };
  const digest = resultDigest({ escrow: binding, resultHash, units: 0n });
  return settleBatchInstructions({
    programId: PROGRAM_ID,
    relayer: relayerKey,
    usdcMint: key("usdc_mint"),
    agent,
    payoutAccount: key("payout_account"),
    escrows: [binding],
    items: [{ resultHash, units: 0n }],
    feeShardIndex: 5,
    signingKey: Keypair.fromSeed(creatorSeed).publicKey.toBytes(),
    signed: { kind: "call", signature: ed25519Sign(creatorSeed, digest) },
  });
}

const openEscrow = () =>
  openEscrowInstruction({
    programId: PROGRAM_ID,
    relayer: relayer.publicKey,
    usdcMint: key("usdc_mint"),
    agent,
    payer: key("payer"),
    payerTokenAccount: key("payer_token_account"),
    executionId,
    apiKeyId: fromHex(inputs.api_key_id),
    requestHash,
    maxAmountUsdc: 250_000n,
  });

const cases: { name: string; instructions: TransactionInstruction[]; signers?: Keypair[] }[] = [
  { name: "open_escrow", instructions: [openEscrow()] },
  { name: "settle_batch of one: [Ed25519 verification, settle_batch]", instructions: settle(relayer.publicKey) },
  {
    name: "refund with the subscription",
    instructions: [
      refundInstruction({
        programId: PROGRAM_ID,
        relayer: relayer.publicKey,
        usdcMint: key("usdc_mint"),
        escrow,
        reason: "Timeout",
        withSubscription: true,
      }),
    ],
  },
  {
    name: "refund without the subscription (PROGRAM_ID in its place)",
    instructions: [
      refundInstruction({
        programId: PROGRAM_ID,
        relayer: relayer.publicKey,
        usdcMint: key("usdc_mint"),
        escrow,
        reason: "CreatorError",
        withSubscription: false,
      }),
    ],
  },
  {
    name: "subscribe",
    instructions: [
      subscribeInstruction({
        programId: PROGRAM_ID,
        relayer: relayer.publicKey,
        usdcMint: key("usdc_mint"),
        agent,
        payer: key("payer"),
        payerTokenAccount: key("payer_token_account"),
        payoutAccount: key("payout_account"),
        feeShardIndex: 0,
        maxAmountUsdc: 10_000_000n,
      }),
    ],
  },
  { name: "open_escrow and settle together", instructions: [openEscrow(), ...settle(relayer.publicKey)] },
];

// Accounts named twice, with other flags; a program that is also an account; a second signer.
{
  const shared = Keypair.generate().publicKey;
  const cosigner = Keypair.generate();
  const otherProgram = Keypair.generate().publicKey;
  const writableProgram = Keypair.generate().publicKey;
  const ix = (programId: PublicKey, keys: [PublicKey, boolean, boolean][], data: number[]) =>
    new TransactionInstruction({
      programId,
      keys: keys.map(([pubkey, isSigner, isWritable]) => ({ pubkey, isSigner, isWritable })),
      data: Buffer.from(data),
    });
  cases.push({
    name: "duplicates: writable in one instruction and read-only in another, programs as accounts",
    signers: [cosigner],
    instructions: [
      ix(otherProgram, [[shared, false, true], [relayer.publicKey, false, false], [writableProgram, false, true]], [1, 2, 3]),
      ix(writableProgram, [[shared, false, false], [otherProgram, false, false], [cosigner.publicKey, true, false]], []),
      ix(otherProgram, [[cosigner.publicKey, false, false], [shared, false, false], [shared, false, true]], [4]),
    ],
  });
  cases.push({
    name: "compact-u16 lengths of two bytes: 200 account indexes, 300 bytes of data",
    instructions: [
      ix(
        otherProgram,
        Array.from({ length: 200 }, () => [shared, false, true]),
        Array.from({ length: 300 }, (_, i) => i & 255),
      ),
    ],
  });
}

type Flags = { isSigner: boolean; isWritable: boolean };

/** Each account's flags over the whole transaction: a signer if any use signs, writable if any writes. */
function mergedFlags(feePayer: PublicKey, instructions: TransactionInstruction[]): Map<string, Flags> {
  const flags = new Map<string, Flags>([[feePayer.toBase58(), { isSigner: true, isWritable: true }]]);
  for (const ix of instructions) {
    for (const meta of ix.keys) {
      const seen = flags.get(meta.pubkey.toBase58()) ?? { isSigner: false, isWritable: false };
      flags.set(meta.pubkey.toBase58(), {
        isSigner: seen.isSigner || meta.isSigner,
        isWritable: seen.isWritable || meta.isWritable,
      });
    }
    if (!flags.has(ix.programId.toBase58())) flags.set(ix.programId.toBase58(), { isSigner: false, isWritable: false });
  }
  return flags;
}

/** Checks that `read` are `expected`, in order: programs, accounts with their merged flags, data. */
function assertSameInstructions(read: TransactionInstruction[], expected: TransactionInstruction[]): void {
  const flags = mergedFlags(relayer.publicKey, expected);
  assert.equal(read.length, expected.length);
  expected.forEach((ix, i) => {
    const got = read[i]!;
    assert.equal(got.programId.toBase58(), ix.programId.toBase58(), `instruction ${i} program`);
    assert.deepEqual(
      got.keys.map((meta) => ({ pubkey: meta.pubkey.toBase58(), isSigner: meta.isSigner, isWritable: meta.isWritable })),
      ix.keys.map((meta) => ({ pubkey: meta.pubkey.toBase58(), ...flags.get(meta.pubkey.toBase58())! })),
      `instruction ${i} accounts`,
    );
    assert.equal(got.data.toString("hex"), ix.data.toString("hex"), `instruction ${i} data`);
  });
}

function signAndSerialize(message: Uint8Array, signers: Keypair[]): Uint8Array {
  const parsed = Message.from(Buffer.from(message));
  const signatures = parsed.accountKeys.slice(0, parsed.header.numRequiredSignatures).map((pubkey) => {
    const signer = signers.find((s) => s.publicKey.equals(pubkey));
    assert.ok(signer, `a keypair for signer ${pubkey.toBase58()}`);
    return ed25519Sign(signer.secretKey, message);
  });
  return serializeTransaction(signatures, message);
}

describe("legacy transactions (src/transaction.ts)", () => {
  for (const c of cases) {
    describe(c.name, () => {
      const signers = [relayer, ...(c.signers ?? [])];
      const message = compileLegacyMessage(relayer.publicKey, c.instructions, blockhash);
      const bytes = signAndSerialize(message, signers);
      const web3 = new Transaction({ feePayer: relayer.publicKey, blockhash, lastValidBlockHeight: 1 }).add(...c.instructions);

      it("Transaction.from reads back the fee payer, the blockhash and every instruction, and the signatures verify", () => {
        const transaction = Transaction.from(bytes);
        assert.ok(transaction.feePayer!.equals(relayer.publicKey));
        assert.equal(transaction.recentBlockhash, blockhash);
        assert.ok(transaction.verifySignatures());
        assertSameInstructions(transaction.instructions, c.instructions);
      });

      it("has the header and the account set of web3.js's compileMessage, the fee payer first, each account once", () => {
        const ours = Message.from(Buffer.from(message));
        const theirs = web3.compileMessage();
        assert.deepEqual(ours.header, theirs.header);
        const names = (keys: PublicKey[]) => keys.map((k) => k.toBase58());
        assert.deepEqual(names(ours.accountKeys).sort(), names(theirs.accountKeys).sort());
        assert.equal(new Set(names(ours.accountKeys)).size, ours.accountKeys.length);
        assert.ok(ours.accountKeys[0]!.equals(relayer.publicKey));
        assert.deepEqual(new Uint8Array(ours.serialize()), message);
      });

      it("is as long as what web3.js serializes", () => {
        web3.sign(...signers);
        assert.equal(bytes.length, web3.serialize().length);
      });
    });
  }

  it("lists an account once, writable if any instruction writes it; program ids read-only unless written", () => {
    const c = cases.find((c) => c.name.startsWith("duplicates"))!;
    const ours = Message.from(Buffer.from(compileLegacyMessage(relayer.publicKey, c.instructions, blockhash)));
    const [otherProgram, writableProgram] = [c.instructions[0]!.programId, c.instructions[1]!.programId];
    const shared = c.instructions[0]!.keys[0]!.pubkey;
    const index = (k: PublicKey) => ours.accountKeys.findIndex((a) => a.equals(k));
    assert.equal(ours.accountKeys.filter((k) => k.equals(shared)).length, 1);
    assert.equal(ours.isAccountWritable(index(shared)), true);
    assert.equal(ours.isAccountWritable(0) && ours.isAccountSigner(0), true, "the fee payer, read-only in an instruction");
    assert.equal(ours.isAccountWritable(index(otherProgram)), false);
    assert.equal(ours.isAccountWritable(index(writableProgram)), true);
    assert.deepEqual(ours.header, { numRequiredSignatures: 2, numReadonlySignedAccounts: 1, numReadonlyUnsignedAccounts: 1 });
    // The builders name the program itself (event_cpi's `program`) as well as calling it.
    const open = Message.from(Buffer.from(compileLegacyMessage(relayer.publicKey, [openEscrow()], blockhash)));
    assert.equal(open.accountKeys.filter((k) => k.equals(PROGRAM_ID)).length, 1);
    assert.equal(open.isAccountWritable(open.accountKeys.findIndex((k) => k.equals(PROGRAM_ID))), false);
  });

  describe("refuse", () => {
    const program = Keypair.generate().publicKey;

    it("more than 256 accounts", () => {
      const keys = Array.from({ length: 256 }, () => ({
        pubkey: Keypair.generate().publicKey,
        isSigner: false,
        isWritable: false,
      }));
      const ix = new TransactionInstruction({ programId: program, keys: keys.slice(0, 254), data: Buffer.alloc(0) });
      // Fee payer, program and 254 accounts: 256, too large a transaction but a valid index.
      assert.throws(() => compileLegacyMessage(relayer.publicKey, [ix], blockhash), /more than the 1232/);
      const tooMany = new TransactionInstruction({ programId: program, keys, data: Buffer.alloc(0) });
      assert.throws(() => compileLegacyMessage(relayer.publicKey, [tooMany], blockhash), /at most 256 accounts, got 258/);
    });

    it(`a transaction over ${PACKET_DATA_SIZE} bytes, and takes one of exactly ${PACKET_DATA_SIZE}`, () => {
      const withData = (length: number) => {
        const ix = new TransactionInstruction({ programId: program, keys: [], data: Buffer.alloc(length) });
        return compileLegacyMessage(relayer.publicKey, [ix], blockhash);
      };
      // 1 + 64 signature bytes, a 3-byte header, 1 + 2 × 32 keys, 32 of blockhash, 1 + 1 + 1 + 2 + data.
      const fits = PACKET_DATA_SIZE - (1 + 64 + 3 + 1 + 64 + 32 + 1 + 1 + 1 + 2);
      const bytes = signAndSerialize(withData(fits), [relayer]);
      assert.equal(bytes.length, PACKET_DATA_SIZE);
      assert.ok(Transaction.from(bytes).verifySignatures());
      assert.throws(() => withData(fits + 1), /1233 bytes, more than the 1232 a packet carries/);
    });

    it("signatures that are not the message's: too few, too many, not 64 bytes", () => {
      const message = compileLegacyMessage(relayer.publicKey, [openEscrow()], blockhash);
      const signature = ed25519Sign(relayer.secretKey, message);
      assert.throws(() => serializeTransaction([], message), /needs 1 signatures, got 0/);
      assert.throws(() => serializeTransaction([signature, signature], message), /needs 1 signatures, got 2/);
      assert.throws(() => serializeTransaction([signature.subarray(1)], message), /64 bytes, got 63/);
    });

    it("a blockhash that is not 32 bytes of base58", () => {
      assert.throws(() => compileLegacyMessage(relayer.publicKey, [openEscrow()], "0OIl"), /not a base58 blockhash/);
      assert.throws(() => compileLegacyMessage(relayer.publicKey, [openEscrow()], "11111"), /not a base58 blockhash/);
    });
  });
});

describe("v0 transactions (src/transaction.ts)", () => {
  const signerOf = (message: Uint8Array) => ed25519Sign(relayer.secretKey, message);
  /** A table holding every account of `instructions` but the fee payer, plus unrelated addresses around them. */
  function tableFor(instructions: TransactionInstruction[]) {
    const named = instructions.flatMap((ix) => ix.keys.map((meta) => meta.pubkey)).filter((k) => !k.equals(relayer.publicKey));
    const unique = [...new Map(named.map((k) => [k.toBase58(), k])).values()];
    return { key: Keypair.generate().publicKey, addresses: [Keypair.generate().publicKey, ...unique, Keypair.generate().publicKey] };
  }
  const asWeb3 = (table: { key: PublicKey; addresses: readonly PublicKey[] }) =>
    ({ key: table.key, state: { addresses: [...table.addresses] }, isActive: () => true }) as unknown as AddressLookupTableAccount;

  for (const c of cases.filter((c) => (c.signers ?? []).length === 0)) {
    it(`${c.name}: web3.js decompiles the same instructions, and the signature verifies`, () => {
      const table = tableFor(c.instructions);
      const message = compileV0Message(relayer.publicKey, c.instructions, blockhash, [table]);
      const bytes = serializeTransaction([signerOf(message)], message);
      const read = VersionedTransaction.deserialize(bytes);
      assert.equal(read.message.version, 0);
      assert.deepEqual(new Uint8Array(read.message.serialize()), message, "web3.js serializes it back to the same bytes");
      const decompiled = TransactionMessage.decompile(read.message, { addressLookupTableAccounts: [asWeb3(table)] });
      assert.ok(decompiled.payerKey.equals(relayer.publicKey));
      assert.equal(decompiled.recentBlockhash, blockhash);
      assertSameInstructions(decompiled.instructions, c.instructions);
      assert.ok(ed25519Verify(read.signatures[0]!, message, relayer.publicKey.toBytes()));
    });
  }

  it("keeps signers and invoked programs static, loads the rest from the first table holding them", () => {
    const ix = openEscrow();
    const everything = { key: Keypair.generate().publicKey, addresses: [relayer.publicKey, PROGRAM_ID, ...ix.keys.map((meta) => meta.pubkey)] };
    const second = { key: Keypair.generate().publicKey, addresses: ix.keys.map((meta) => meta.pubkey) };
    const read = VersionedMessage.deserialize(compileV0Message(relayer.publicKey, [ix], blockhash, [everything, second]));
    const staticKeys = read.staticAccountKeys.map((k) => k.toBase58());
    assert.ok(staticKeys.includes(relayer.publicKey.toBase58()), "the fee payer signs: static");
    assert.ok(staticKeys.includes(PROGRAM_ID.toBase58()), "the invoked program: static");
    assert.equal(read.addressTableLookups.length, 1, "nothing left for the second table, so it is not named");
    assert.ok(read.addressTableLookups[0]!.accountKey.equals(everything.key));
  });

  it("with no table holding anything, is a v0 message of static keys only; fitsTransaction counts what the tables save", () => {
    const ix = openEscrow();
    const unrelated = { key: Keypair.generate().publicKey, addresses: [Keypair.generate().publicKey] };
    const read = VersionedMessage.deserialize(compileV0Message(relayer.publicKey, [ix], blockhash, [unrelated]));
    assert.equal(read.addressTableLookups.length, 0);
    const many = Array.from({ length: 34 }, () => ({ pubkey: Keypair.generate().publicKey, isSigner: false, isWritable: true }));
    const wide = new TransactionInstruction({ programId: PROGRAM_ID, keys: many, data: Buffer.alloc(8) });
    assert.equal(fitsTransaction(relayer.publicKey, [wide]), false, "34 static keys are over 1,232 bytes");
    const table = { key: Keypair.generate().publicKey, addresses: many.map((meta) => meta.pubkey) };
    assert.equal(fitsTransaction(relayer.publicKey, [wide], [table]), true, "loaded, they fit");
  });
});
