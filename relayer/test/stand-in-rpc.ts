// A stand-in for a Solana JSON-RPC node, for the relayer's own tests of what it decides from
// accounts: it holds the accounts a test sets and answers the reads the relayer makes (single,
// batched, by program with filters), and the transactions a test sets carrying the program's
// events (a settlement batch's EscrowsSettledToLog, which holds its leaves), listed by the
// addresses they mention as a test adds them. It executes nothing: a method it does not know
// (sending a transaction among them) is answered "method not found", so a test that reaches the
// chain's write path fails loudly; those paths are tested against localnet in tests/.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { coder, eventAuthorityPda, EVENT_IX_TAG_LE, IDL, toAnchor, type AccountData, type AccountName, type EventData, type EventName } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { AccountLayout, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { SYSVAR_CLOCK_PUBKEY, type PublicKey } from "@solana/web3.js";

interface StoredAccount {
  data: Buffer;
  owner: string;
  lamports: number;
}

interface Call {
  jsonrpc: "2.0";
  id: number | string;
  method: string;
  params?: unknown[];
}

type Filter = { dataSize: number } | { memcmp: { offset: number; bytes: string; encoding?: string } };

const RENT_EXEMPT_LAMPORTS = 2_000_000;
const SYSVAR_PROGRAM = "Sysvar1111111111111111111111111111111111111";
/** The one slot the stand-in answers at: nothing it holds moves by itself. */
const SLOT = 1_000;

export class StandInRpc {
  private readonly accounts = new Map<string, StoredAccount>();
  /** getTransaction's answers, by signature. */
  private readonly transactions = new Map<string, unknown>();
  /** getSignaturesForAddress's answers, newest first, by address. */
  private readonly signatures = new Map<string, { signature: string; failed: boolean }[]>();
  /** Every method asked for, in order (a batch counts each of its calls). */
  readonly methods: string[] = [];
  /** The same calls with their parameters, for a test that counts the calls naming an address. */
  readonly calls: { method: string; params: unknown[] }[] = [];
  /** While true, every request gets HTTP 503, as from a node that is down. */
  down = false;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<StandInRpc> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const rpc = new StandInRpc(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on("request", (request, response) => {
      void rpc.answer(request).then(
        (body) => {
          if (body === null) {
            response.writeHead(503).end();
            return;
          }
          response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
        },
        () => response.writeHead(400).end(),
      );
    });
    return rpc;
  }

  /** Sets the account at `address` to `data` as the program's: an account whose contents the relayer only looks for. */
  setRawProgramAccount(address: PublicKey, programId: PublicKey, data: Buffer): void {
    this.accounts.set(address.toBase58(), { data, owner: programId.toBase58(), lamports: RENT_EXEMPT_LAMPORTS });
  }

  /** Sets the account at `address` to the program's account `name`, given as the program client decodes it. */
  async setProgramAccount<A extends AccountName>(address: PublicKey, programId: PublicKey, name: A, value: AccountData<A>): Promise<void> {
    const data = await coder.accounts.encode(name, toAnchor({ defined: { name } }, value));
    this.accounts.set(address.toBase58(), { data, owner: programId.toBase58(), lamports: RENT_EXEMPT_LAMPORTS });
  }

  /**
   * Sets transaction `signature` as one instruction of the program that emitted `event` (an
   * emit_cpi! self-invocation with the event authority as its account), as getTransaction
   * answers it.
   */
  setEventTransaction<N extends EventName>(signature: string, programId: PublicKey, name: N, value: EventData<N>): void {
    const discriminator = IDL.events.find((event) => event.name === name)!.discriminator;
    const encoded = coder.types.encode(name, toAnchor({ defined: { name } }, value));
    const data = utils.bytes.bs58.encode(Buffer.concat([EVENT_IX_TAG_LE, Uint8Array.from(discriminator), encoded]));
    const accountKeys = [eventAuthorityPda(programId).toBase58(), programId.toBase58()];
    this.transactions.set(signature, {
      slot: SLOT,
      blockTime: null,
      transaction: {
        signatures: [signature],
        message: {
          header: { numRequiredSignatures: 1, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 1 },
          accountKeys,
          recentBlockhash: utils.bytes.bs58.encode(new Uint8Array(32)),
          instructions: [{ programIdIndex: 1, accounts: [], data: "" }],
        },
      },
      meta: {
        err: null,
        fee: 5_000,
        preBalances: [0, 0],
        postBalances: [0, 0],
        innerInstructions: [{ index: 0, instructions: [{ programIdIndex: 1, accounts: [0], data, stackHeight: 2 }] }],
      },
    });
  }

  /**
   * Adds `signature` as the newest transaction that mentions `address`, as getSignaturesForAddress
   * lists it (failed: it landed with an error). Its transaction is whatever setEventTransaction
   * set, or none.
   */
  addSignature(address: PublicKey, signature: string, failed = false): void {
    this.signatures.set(address.toBase58(), [{ signature, failed }, ...(this.signatures.get(address.toBase58()) ?? [])]);
  }

  /** Sets an SPL token account of `mint` owned by `owner`, delegating `delegated_usdc` to `delegate` when given. */
  setTokenAccount(
    address: PublicKey,
    fields: { mint: PublicKey; owner: PublicKey; amount_usdc: bigint; delegate?: PublicKey; delegated_usdc?: bigint },
  ): void {
    const data = Buffer.alloc(AccountLayout.span);
    AccountLayout.encode(
      {
        mint: fields.mint,
        owner: fields.owner,
        amount: fields.amount_usdc,
        delegateOption: fields.delegate ? 1 : 0,
        delegate: fields.delegate ?? fields.owner,
        state: 1,
        isNativeOption: 0,
        isNative: 0n,
        delegatedAmount: fields.delegated_usdc ?? 0n,
        closeAuthorityOption: 0,
        closeAuthority: fields.owner,
      },
      data,
    );
    this.accounts.set(address.toBase58(), { data, owner: TOKEN_PROGRAM_ID.toBase58(), lamports: RENT_EXEMPT_LAMPORTS });
  }

  /** Sets the clock sysvar to `unix_timestamp_secs`: the time the program (and the relayer, for it) judges windows by. */
  setClock(unix_timestamp_secs: bigint): void {
    const data = Buffer.alloc(40);
    data.writeBigUInt64LE(BigInt(SLOT), 0);
    data.writeBigInt64LE(unix_timestamp_secs, 32);
    this.accounts.set(SYSVAR_CLOCK_PUBKEY.toBase58(), { data, owner: SYSVAR_PROGRAM, lamports: 1 });
  }

  remove(address: PublicKey): void {
    this.accounts.delete(address.toBase58());
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The body to answer `request` with; null for a 503. */
  private async answer(request: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (this.down) return null;
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Call | Call[];
    return Array.isArray(body) ? body.map((call) => this.reply(call)) : this.reply(body);
  }

  private reply(call: Call): unknown {
    this.methods.push(call.method);
    const params = call.params ?? [];
    this.calls.push({ method: call.method, params });
    const context = { slot: SLOT };
    switch (call.method) {
      case "getAccountInfo":
        return { jsonrpc: "2.0", id: call.id, result: { context, value: this.info(params[0] as string) } };
      case "getMultipleAccounts":
        return { jsonrpc: "2.0", id: call.id, result: { context, value: (params[0] as string[]).map((address) => this.info(address)) } };
      case "getProgramAccounts": {
        const options = (params[1] ?? {}) as { filters?: Filter[]; withContext?: boolean };
        const found = [...this.accounts.entries()]
          .filter(([, account]) => account.owner === params[0] && (options.filters ?? []).every((filter) => matches(account.data, filter)))
          .map(([pubkey]) => ({ pubkey, account: this.info(pubkey) }));
        return { jsonrpc: "2.0", id: call.id, result: options.withContext ? { context, value: found } : found };
      }
      case "getSlot":
        return { jsonrpc: "2.0", id: call.id, result: SLOT };
      case "getSignaturesForAddress": {
        const { limit = 1000 } = (params[1] ?? {}) as { limit?: number };
        const listed = (this.signatures.get(params[0] as string) ?? []).slice(0, limit).map(({ signature, failed }) => ({
          signature,
          slot: SLOT,
          err: failed ? { InstructionError: [0, "Custom"] } : null,
          memo: null,
          blockTime: null,
          confirmationStatus: "confirmed",
        }));
        return { jsonrpc: "2.0", id: call.id, result: listed };
      }
      case "getTransaction":
        return { jsonrpc: "2.0", id: call.id, result: this.transactions.get(params[0] as string) ?? null };
      default:
        return { jsonrpc: "2.0", id: call.id, error: { code: -32601, message: `Method not found: the stand-in RPC does not ${call.method}` } };
    }
  }

  private info(address: string) {
    const account = this.accounts.get(address);
    if (!account) return null;
    return {
      data: [account.data.toString("base64"), "base64"],
      executable: false,
      lamports: account.lamports,
      owner: account.owner,
      rentEpoch: 0,
      space: account.data.length,
    };
  }
}

function matches(data: Buffer, filter: Filter): boolean {
  if ("dataSize" in filter) return data.length === filter.dataSize;
  const { offset, bytes, encoding } = filter.memcmp;
  const wanted = encoding === "base64" ? Buffer.from(bytes, "base64") : Buffer.from(utils.bytes.bs58.decode(bytes));
  return data.subarray(offset, offset + wanted.length).equals(wanted);
}
