// Each agent's address lookup table (docs/architecture.md, "Lookup tables"), on localnet with the
// relayer's PostgreSQL. Who makes one: the relayer, on an agent's first batch, which only paid
// calls cause; what it costs: the relayer's SOL, the table's rent (held for the agent's life) and
// one fee, once per agent and network whatever the number of calls or instances, since the
// instance that claims the `lookup_tables` row is the only one that creates it.
import { strict as assert } from "node:assert";

import { agentTableAddresses } from "@agent-market/program";
import { LookupTables, PriorityFees, TransactionSender } from "@agent-market/relayer";
import { AddressLookupTableAccount, Keypair, PublicKey } from "@solana/web3.js";

import { TestMarket } from "./src/fixtures.js";
import { sleep } from "./src/localnet.js";
import { listAgent, type ListedAgent } from "./src/marketplace.js";
import { startRelayer, type RunningRelayer } from "./src/relayer.js";

const OPTIONS = { retry_ms: 60_000, abandoned_ms: 60_000, poll_ms: 50 };

describe("relayer: an address lookup table per agent", function () {
  this.timeout(120_000);
  let market: TestMarket;
  let relayer: RunningRelayer;
  const agents: ListedAgent[] = [];

  before(async () => {
    market = await TestMarket.start();
    relayer = await startRelayer(market.localnet, { LOOKUP_TABLES: "false" });
  });
  after(async () => {
    await Promise.all(agents.map((agent) => agent.server.close()));
    await relayer?.close();
    await market?.stop();
  });

  /** An instance's tables, as a relayer process of the deployment keeps them (same key, same database). */
  function instance(): LookupTables {
    const { db, chain, config } = relayer.services;
    const fees = new PriorityFees(chain.rpc("devnet"), config.priority_fee);
    const sender = new TransactionSender(chain.rpc("devnet"), config.networks.devnet!.relayer_keypair, chain.programId("devnet"), fees);
    return new LookupTables(db, chain, { devnet: sender }, OPTIONS);
  }

  async function newAgent(): Promise<ListedAgent> {
    const agent = await listAgent(market, relayer);
    agents.push(agent);
    return agent;
  }

  const claimed = async (agent: ListedAgent): Promise<string[]> =>
    (await relayer.services.db.query("SELECT address FROM lookup_tables WHERE agent = $1", [agent.address.toBase58()])).rows.map(
      (row: { address: string }) => row.address,
    );

  it("holds the agent's fixed accounts; two instances asking at once make one table, paid once", async () => {
    const agent = await newAgent();
    const relayerKey = relayer.services.config.networks.devnet!.relayer_keypair.publicKey;
    const solBefore = await market.lamports(relayerKey);
    const [a, b] = [instance(), instance()];
    const outcomes = await Promise.allSettled([a.prepare("devnet", agent.address), b.prepare("devnet", agent.address)]);
    const made = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
    assert.ok(made.length >= 1, JSON.stringify(outcomes));
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") assert.match(String(outcome.reason), /another instance (claimed|is creating) the table/);
    }
    const table = made[0]!;
    for (const other of made) assert.ok(other.key.equals(table.key), "one table");
    assert.deepEqual(await claimed(agent), [table.key.toBase58()]);
    // The instance that was told to wait finds the same table later.
    assert.ok((await b.prepare("devnet", agent.address)).key.equals(table.key));

    const account = await market.connection.getAccountInfo(table.key, "confirmed");
    assert.ok(account, "on chain");
    const state = AddressLookupTableAccount.deserialize(account.data);
    assert.ok(state.authority?.equals(relayerKey), "the relayer's table");
    const onChainAgent = (await relayer.services.chain.agent("devnet", agent.address))!;
    const market_ = await relayer.services.chain.market("devnet");
    assert.deepEqual(
      state.addresses.map((key) => key.toBase58()),
      agentTableAddresses({ programId: market.programId, agent: agent.address, usdcMint: market_.usdcMint, payoutAccount: onChainAgent.payoutAccount }).map((key) => key.toBase58()),
    );
    const spent = solBefore - (await market.lamports(relayerKey));
    assert.equal(spent, BigInt(account.lamports) + 5_000n, "the table's rent and one fee, once");
  });

  it("prepares a table only when a batch wants one, answers none until it can be loaded from, then the table", async () => {
    const agent = await newAgent();
    const tables = instance();
    assert.deepEqual(tables.tablesFor("devnet", agent.address.toBase58()), [], "none until a batch wants one");
    await sleep(200);
    assert.deepEqual(await claimed(agent), [], "asking for a usable table prepares none");
    tables.want("devnet", agent.address.toBase58());
    assert.deepEqual(tables.tablesFor("devnet", agent.address.toBase58()), [], "the batch that wants one goes without");
    const deadline = Date.now() + 20_000;
    let found = tables.tablesFor("devnet", agent.address.toBase58());
    while (found.length === 0) {
      assert.ok(Date.now() < deadline, "the table became usable");
      await sleep(50);
      found = tables.tablesFor("devnet", agent.address.toBase58());
    }
    assert.deepEqual(await claimed(agent), [found[0]!.key.toBase58()]);
    const slot = await market.connection.getSlot("processed");
    const state = AddressLookupTableAccount.deserialize((await market.connection.getAccountInfo(found[0]!.key, "processed"))!.data);
    assert.ok(slot > state.lastExtendedSlot, "only once the chain is past the slot its addresses were added in");
  });

  it("leaves a fresh claim to the instance that made it, and takes over one whose table never appeared", async () => {
    const agent = await newAgent();
    const nowhere = Keypair.generate().publicKey.toBase58();
    await relayer.services.db.query("INSERT INTO lookup_tables (network, agent, address) VALUES ('devnet', $1, $2)", [agent.address.toBase58(), nowhere]);
    await assert.rejects(instance().prepare("devnet", agent.address), /another instance is creating the table/);
    assert.deepEqual(await claimed(agent), [nowhere], "a fresh claim is left alone");

    await relayer.services.db.query("UPDATE lookup_tables SET claimed_at = now() - interval '2 minutes' WHERE agent = $1", [agent.address.toBase58()]);
    const table = await instance().prepare("devnet", agent.address);
    assert.notEqual(table.key.toBase58(), nowhere);
    assert.deepEqual(await claimed(agent), [table.key.toBase58()], "the abandoned claim replaced");
    assert.ok(await market.connection.getAccountInfo(new PublicKey(table.key), "confirmed"));
  });
});
