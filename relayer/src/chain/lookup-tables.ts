// Each agent's address lookup table, made once the agent's batches outgrow a legacy transaction:
// until it can be loaded from, they go as legacy transactions (fewer escrows each); from then on
// as v0 ones that load the accounts every batch names from it. One table per agent and network,
// shared by every relayer instance through the `lookup_tables` row the first to need it claims.
// Its rent (about 0.0033 SOL for 21 addresses) is paid once by the relayer and held for the
// agent's life, so it is spent only on agents whose load it pays back: an agent called now and
// then never gets one (docs/api.md, "The relayer's SOL").
import { agentTableAddresses, type LookupTable, type NetworkName } from "@agent-market/program";
import { AddressLookupTableAccount, AddressLookupTableProgram, PublicKey } from "@solana/web3.js";

import type { Db } from "../db/database.js";
import type { ChainService } from "./chain-service.js";
import type { TransactionSender } from "./tx-sender.js";

export interface LookupTableOptions {
  /** After a failure (or while another instance makes the table), how long before trying again. */
  retry_ms: number;
  /** A claim whose table never appeared on chain is taken over after this long. */
  abandoned_ms: number;
  /** How often to look whether the table can be loaded from yet (its addresses, from the slot after they were added). */
  poll_ms: number;
}

export const LOOKUP_TABLE_DEFAULTS: LookupTableOptions = { retry_ms: 30_000, abandoned_ms: 60_000, poll_ms: 100 };
/** Polls before giving up on a table becoming usable (it does a slot after its creation). */
const MAX_POLLS = 100;

export class LookupTables {
  private readonly usable = new Map<string, LookupTable>();
  /** Keys being prepared (Infinity) or failed, until when they are left alone. */
  private readonly waiting = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly chain: ChainService,
    private readonly senders: Partial<Record<NetworkName, TransactionSender>>,
    private readonly options: LookupTableOptions = LOOKUP_TABLE_DEFAULTS,
  ) {}

  /** The agent's table if it can be loaded from now, else none. */
  tablesFor(network: NetworkName, agent: string): LookupTable[] {
    const table = this.usable.get(`${network}:${agent}`);
    return table ? [table] : [];
  }

  /**
   * Prepares the agent's table in the background (once at a time), for a batch that did not fit
   * one legacy transaction: the callers go on without it meanwhile.
   */
  want(network: NetworkName, agent: string): void {
    const key = `${network}:${agent}`;
    if (this.usable.has(key)) return;
    if ((this.waiting.get(key) ?? 0) <= Date.now()) {
      this.waiting.set(key, Infinity);
      this.prepare(network, new PublicKey(agent)).then(
        (prepared) => {
          this.usable.set(key, prepared);
          this.waiting.delete(key);
        },
        () => this.waiting.set(key, Date.now() + this.options.retry_ms),
      );
    }
  }

  /** The agent's table once it can be loaded from: the claimed one, or one created now. */
  async prepare(network: NetworkName, agent: PublicKey): Promise<LookupTable> {
    const claimed = await this.db.query<{ address: string; abandoned: boolean }>(
      `SELECT address, claimed_at < now() - make_interval(secs => $3) AS abandoned
         FROM lookup_tables WHERE network = $1 AND agent = $2`,
      [network, agent.toBase58(), this.options.abandoned_ms / 1000],
    );
    const row = claimed.rows[0];
    if (row) {
      const table = await this.read(network, new PublicKey(row.address));
      if (table) return this.whenUsable(network, table);
      if (!row.abandoned) throw new Error("another instance is creating the table");
      await this.release(network, agent, row.address);
    }
    return this.whenUsable(network, await this.create(network, agent));
  }

  private async create(network: NetworkName, agent: PublicKey): Promise<{ table: AddressLookupTableAccount; key: PublicKey }> {
    const sender = this.senders[network];
    if (!sender) throw new Error(`no sender for ${network}`);
    const programId = this.chain.programId(network);
    const [market, onChain] = await Promise.all([this.chain.market(network), this.chain.agent(network, agent)]);
    if (!onChain) throw new Error("the agent is not on chain");
    const addresses = agentTableAddresses({ programId, agent, usdcMint: market.usdcMint, payoutAccount: onChain.payoutAccount });
    // A finalized slot is in every node's recent slot hashes, which the table's address derives from.
    const recentSlot = await this.chain.rpc(network).getSlot("finalized");
    const authority = sender.signer.publicKey;
    const [createIx, address] = AddressLookupTableProgram.createLookupTable({ authority, payer: authority, recentSlot });
    const inserted = await this.db.query(
      `INSERT INTO lookup_tables (network, agent, address) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [network, agent.toBase58(), address.toBase58()],
    );
    if (inserted.rowCount !== 1) throw new Error("another instance claimed the table");
    const extendIx = AddressLookupTableProgram.extendLookupTable({ lookupTable: address, authority, payer: authority, addresses });
    const sent = await sender.send(await sender.sign([createIx, extendIx]));
    const table = sent.kind === "processed" ? await this.read(network, address) : null;
    if (!table) {
      await this.release(network, agent, address.toBase58());
      throw new Error(`the table was not created: ${sent.kind === "rejected" ? sent.message : sent.kind}`);
    }
    return table;
  }

  /** Gives up the claim of a table that is not on chain, unless another instance has replaced it. */
  private async release(network: NetworkName, agent: PublicKey, address: string): Promise<void> {
    await this.db.query(`DELETE FROM lookup_tables WHERE network = $1 AND agent = $2 AND address = $3`, [network, agent.toBase58(), address]);
  }

  private async read(network: NetworkName, key: PublicKey): Promise<{ table: AddressLookupTableAccount; key: PublicKey } | null> {
    const [account] = await this.chain.rpc(network).getMultipleAccounts([key], "processed");
    if (!account) return null;
    return { key, table: new AddressLookupTableAccount({ key, state: AddressLookupTableAccount.deserialize(account.data) }) };
  }

  /** Addresses added in a slot can be loaded from the next one on. */
  private async whenUsable(network: NetworkName, { table, key }: { table: AddressLookupTableAccount; key: PublicKey }): Promise<LookupTable> {
    for (let polls = 0; polls < MAX_POLLS; polls++) {
      if ((await this.chain.rpc(network).getSlot("processed")) > table.state.lastExtendedSlot) {
        return { key, addresses: table.state.addresses };
      }
      await new Promise((resolve) => setTimeout(resolve, this.options.poll_ms));
    }
    throw new Error("the table did not become usable");
  }
}
