// The relayer's program id per network (DEVNET_PROGRAM_ID): it reads the market at that program's
// PDA and names the id in GET /v1/marketplace. Localnet runs the program at the IDL's id only, so
// a relayer configured with another id finds no market there and says so.
import { strict as assert } from "node:assert";

import { PROGRAM_ID } from "@agent-market/program";
import { Keypair } from "@solana/web3.js";

import { TestMarket } from "./src/fixtures.js";
import { api, startRelayer, type RunningRelayer } from "./src/relayer.js";

interface MarketplaceBody {
  program_id: string;
  networks: { name: string; program_id: string; usdc_mint: string }[];
}

describe("relayer: the program id per network", function () {
  this.timeout(120_000);
  let market: TestMarket;
  const relayers: RunningRelayer[] = [];

  before(async () => {
    market = await TestMarket.start();
  });
  after(async () => {
    for (const relayer of relayers) await relayer.close();
    await market?.stop();
  });

  it("names the configured id, localnet's (the IDL's), for each network, and serves the market there", async () => {
    const relayer = await startRelayer(market.localnet);
    relayers.push(relayer);
    const response = await api<MarketplaceBody>(relayer, "GET", "/v1/marketplace");
    assert.equal(response.status, 200);
    assert.equal(response.body.program_id, PROGRAM_ID.toBase58());
    assert.deepEqual(
      response.body.networks.map((n) => [n.name, n.program_id, n.usdc_mint]),
      [["devnet", PROGRAM_ID.toBase58(), market.usdcMint.toBase58()]],
    );
  });

  it("reads the market of the configured program: none at another id on localnet", async () => {
    const elsewhere = Keypair.generate().publicKey.toBase58();
    const relayer = await startRelayer(market.localnet, { DEVNET_PROGRAM_ID: elsewhere });
    relayers.push(relayer);
    assert.equal(relayer.services.chain.programId("devnet").toBase58(), elsewhere);
    const response = await api<{ error: { code: string; message: string } }>(relayer, "GET", "/v1/marketplace");
    assert.equal(response.status, 503);
    assert.equal(response.body.error.code, "chain_unavailable");
    assert.equal(response.body.error.message, "The agent_market program has no market on devnet.");
  });
});
