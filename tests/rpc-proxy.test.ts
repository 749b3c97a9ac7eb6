// The fault-injection proxy itself (tests/src/rpc-proxy.ts): a "drop" takes back every
// transaction its request sent, a request the relayer's client batched with other calls included
// (a send it missed there landed, and a test of a lost send then saw it succeed).
import { strict as assert } from "node:assert";

import { utils } from "@coral-xyz/anchor";
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from "@solana/web3.js";

import { TestMarket } from "./src/fixtures.js";
import { startRpcProxy, type RpcProxy } from "./src/rpc-proxy.js";

describe("rpc proxy: drop", () => {
  let market: TestMarket;
  let proxy: RpcProxy;

  before(async () => {
    market = await TestMarket.start();
    proxy = await startRpcProxy(market.localnet.rpcUrl);
  });
  after(async () => {
    await proxy?.close();
    await market?.stop();
  });

  /** A signed transfer of 1 SOL to a new address, base64, with its signature and recipient. */
  async function transfer(): Promise<{ bytes: string; signature: string; to: Keypair }> {
    const from = await market.fundedWallet();
    const to = Keypair.generate();
    const { blockhash } = await market.connection.getLatestBlockhash("confirmed");
    const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports: LAMPORTS_PER_SOL }),
    );
    tx.sign(from);
    return { bytes: tx.serialize().toString("base64"), signature: utils.bytes.bs58.encode(tx.signature!), to };
  }

  const post = async (body: unknown) =>
    (await fetch(proxy.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json() as Promise<unknown>;

  const sendCall = (id: number, bytes: string) => ({ jsonrpc: "2.0", id, method: "sendTransaction", params: [bytes, { encoding: "base64" }] });

  for (const batched of [false, true]) {
    it(`takes back a send ${batched ? "batched with other calls" : "made alone"}: answered with its signature, never landed`, async () => {
      const { bytes, signature, to } = await transfer();
      const rule = proxy.fail("sendTransaction", "drop");
      const answer = batched
        ? await post([{ jsonrpc: "2.0", id: 1, method: "getSlot", params: [] }, sendCall(2, bytes), { jsonrpc: "2.0", id: 3, method: "getBlockHeight", params: [] }])
        : await post(sendCall(2, bytes));
      const sent = [answer].flat().find((item) => (item as { id: number }).id === 2) as { result?: string };
      assert.equal(sent.result, signature, "the client has its signature");
      assert.equal(rule.hits, 1);
      const { value } = await market.connection.getSignatureStatuses([signature], { searchTransactionHistory: true });
      assert.equal(value[0], null, "the chain has nothing");
      assert.equal(await market.connection.getBalance(to.publicKey, "processed"), 0);
      proxy.clear();
    });
  }
});
