// The size of a receipt-closing transaction: RECEIPTS_PER_TRANSACTION close_receipt instructions
// are as many as one legacy transaction carries, and one more would not fit.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import { closeReceiptInstruction, compileLegacyMessage, PACKET_DATA_SIZE, serializeTransaction } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { RECEIPTS_PER_TRANSACTION } from "../src/executions/receipt-closer.js";

function closeReceiptsTransaction(receipts: number): Uint8Array {
  const relayer = Keypair.generate().publicKey;
  // Any deployment's id: an address is 32 bytes whichever it is.
  const programId = Keypair.generate().publicKey;
  const instructions = Array.from({ length: receipts }, () =>
    closeReceiptInstruction({ programId, executionId: randomBytes(16), rentPayer: relayer }),
  );
  const message = compileLegacyMessage(relayer, instructions, Keypair.generate().publicKey.toBase58());
  return serializeTransaction([new Uint8Array(64)], message);
}

describe("receipt closer", () => {
  it(`fits ${RECEIPTS_PER_TRANSACTION} close_receipt instructions in one transaction`, () => {
    assert.ok(closeReceiptsTransaction(RECEIPTS_PER_TRANSACTION).length <= PACKET_DATA_SIZE);
  });

  it("could not fit one more", () => {
    assert.throws(() => closeReceiptsTransaction(RECEIPTS_PER_TRANSACTION + 1), /more than the 1232 a packet carries/);
  });
});
