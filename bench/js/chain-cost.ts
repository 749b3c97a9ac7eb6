// What a paid execution costs the marketplace on chain, counted from the chain itself: runs
// executions through the relayer of a whole local marketplace (at 1 and 32 concurrent clients, then
// refunded ones with the creator down), once unbatched (one open_escrow, one settlement of one
// and one refund a call) and three times batched (escrows opened together, settled together into
// the agent's receipt log): in legacy transactions, in v0 ones loading the agent's fixed accounts
// from its lookup table, and in v0 ones gathering under load (the default), and for each
// execution reads every transaction that touched its escrow. It prints per settled and per
// refunded execution the lamports of fees, the signatures they took, the compute units localnet's
// meter charged and the units the transactions asked for, the lamports the same transactions
// would pay with a priority fee at a stated unit price (charged on the units asked for), and the
// call price at which the marketplace's 1% fee covers the fees. First, the floor under them: what
// every batch full would cost (full-batches.ts).
//
//   npm run bench:cost [-- --calls 256] [--sol-usd 200] [--unit-price 10000]
import { randomBytes } from "node:crypto";
import http from "node:http";

import { escrowPda, parseExecutionId, priorityFeeLamports } from "@agent-market/program";
import { ComputeBudgetProgram, Connection, PublicKey } from "@solana/web3.js";

import { startBenchMarketplace } from "./bench-marketplace.js";
import { feeFloor } from "./full-batches.js";
import { postJson } from "./setup.js";

const callsArg = process.argv.indexOf("--calls");
/** Executions per row at 32 clients; the row at 1 client makes a quarter of them. */
const CALLS = callsArg > 0 ? Number(process.argv[callsArg + 1]) : 256;
const solArg = process.argv.indexOf("--sol-usd");
/** The SOL price the break-even column assumes, in USD. */
const SOL_USD = solArg > 0 ? Number(process.argv[solArg + 1]) : 200;
const priceArg = process.argv.indexOf("--unit-price");
/** The priority fee's unit price the priced column assumes, in micro-lamports. */
const UNIT_PRICE_MICRO_LAMPORTS = BigInt(priceArg > 0 ? process.argv[priceArg + 1]! : 10_000);
const REFUNDED_CALLS = 16;
const LAMPORTS_PER_SOL = 1_000_000_000;
/** The marketplace's share of a call's price (docs/program.md). */
const FEE_BPS = 100;

const keptAlive = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** POSTs `body`; resolves with the status and the execution id the answer names, if any. */
async function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; id?: string }> {
  const { status, json } = await postJson(keptAlive, url, headers, body);
  const answer = json as { id?: string; execution_id?: string; error?: { execution_id?: string } } | null;
  const id = answer?.id ?? answer?.execution_id ?? answer?.error?.execution_id;
  return id === undefined ? { status } : { status, id };
}


/** Runs `total` calls with `clients` in flight; returns the execution ids answered with `status`. */
async function run(clients: number, total: number, status: number, call: () => Promise<{ status: number; id?: string }>): Promise<{ ids: string[]; statuses: Map<number, number> }> {
  const ids: string[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        next += 1;
        const answer = await call();
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.id && answer.status === status) ids.push(answer.id);
      }
    }),
  );
  return { ids, statuses };
}

interface Cost {
  executions: number;
  transactions: number;
  fee_lamports_per_execution: number;
  signatures_per_execution: number;
  units_per_execution: number;
  units_asked_per_execution: number;
  /** The fees, plus the priority fee at UNIT_PRICE_MICRO_LAMPORTS on the units asked for. */
  priced_lamports_per_execution: number;
}

/** The unit limit a transaction asked for (SetComputeUnitLimit, instruction 2: a u32); the default without. */
function unitsAsked(instructions: { programIdIndex: number; data: Uint8Array }[], keys: PublicKey[]): number {
  const limit = instructions.find(
    (instruction) => keys[instruction.programIdIndex]!.equals(ComputeBudgetProgram.programId) && instruction.data[0] === 2,
  );
  return limit ? Buffer.from(limit.data).readUInt32LE(1) : 200_000 * instructions.length;
}

/**
 * Reads every successful transaction that touched the executions' escrows (waiting for the last
 * ones to be confirmed) and shares each one's fee among the escrows of this set it names.
 */
async function chainCost(connection: Connection, programId: PublicKey, ids: string[]): Promise<Cost> {
  const escrows = new Map(ids.map((id) => [escrowPda(parseExecutionId(id)!, programId).toBase58(), id]));
  const seen = new Map<string, { fee: number; signatures: number; units: number; asked: number }>();
  for (const escrow of escrows.keys()) {
    // An escrow is closed by its settlement or refund: wait until its history shows both.
    let history = await connection.getSignaturesForAddress(new PublicKey(escrow), undefined, "confirmed");
    for (let i = 0; i < 100 && history.filter((entry) => entry.err === null).length < 2; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      history = await connection.getSignaturesForAddress(new PublicKey(escrow), undefined, "confirmed");
    }
    for (const entry of history) {
      if (entry.err !== null || seen.has(entry.signature)) continue;
      const transaction = await connection.getTransaction(entry.signature, { commitment: "confirmed", maxSupportedTransactionVersion: 0 });
      if (!transaction?.meta) throw new Error(`transaction ${entry.signature} not found`);
      const keys = transaction.transaction.message.getAccountKeys({ accountKeysFromLookups: transaction.meta.loadedAddresses }).keySegments().flat();
      // Signatures the fee was charged for: the transaction's own and those the Ed25519
      // precompile verified (first byte of its instruction data: their count).
      const precompile = transaction.transaction.message.compiledInstructions
        .filter((instruction) => keys[instruction.programIdIndex]!.toBase58() === "Ed25519SigVerify111111111111111111111111111")
        .reduce((sum, instruction) => sum + (instruction.data[0] ?? 0), 0);
      seen.set(entry.signature, {
        fee: transaction.meta.fee,
        signatures: transaction.transaction.signatures.length + precompile,
        units: transaction.meta.computeUnitsConsumed ?? 0,
        asked: unitsAsked(transaction.transaction.message.compiledInstructions, keys),
      });
    }
  }
  let fee = 0;
  let signatures = 0;
  let units = 0;
  let asked = 0;
  let priority = 0n;
  for (const transaction of seen.values()) {
    fee += transaction.fee;
    signatures += transaction.signatures;
    units += transaction.units;
    asked += transaction.asked;
    priority += priorityFeeLamports(transaction.asked, UNIT_PRICE_MICRO_LAMPORTS);
  }
  return {
    executions: ids.length,
    transactions: seen.size,
    fee_lamports_per_execution: fee / ids.length,
    signatures_per_execution: signatures / ids.length,
    units_per_execution: units / ids.length,
    units_asked_per_execution: asked / ids.length,
    priced_lamports_per_execution: (fee + Number(priority)) / ids.length,
  };
}

/** The call price (USDC) at which the marketplace's fee pays `lamports` of network fees. */
function breakEvenUsdc(lamports: number): number {
  return ((lamports / LAMPORTS_PER_SOL) * SOL_USD * 10_000) / FEE_BPS;
}

/**
 * Unbatched, then the batched one as it was before lookup tables (legacy transactions, each
 * batch as soon as the previous one is sent), with lookup tables (v0 transactions), and as the
 * relayer runs by default (v0, gathering under load: BATCH_GATHER_MS); docs/architecture.md.
 * Each is measured on a marketplace of its own.
 */
const BATCHED = { BATCH_OPENS: "true", BATCH_REFUNDS: "true" };
const DESIGNS = [
  { label: "unbatched", env: { BATCH_OPENS: "false", BATCH_REFUNDS: "false", LOOKUP_TABLES: "false", BATCH_GATHER_MS: "0" } },
  { label: "legacy", env: { ...BATCHED, LOOKUP_TABLES: "false", BATCH_GATHER_MS: "0" } },
  { label: "tables", env: { ...BATCHED, LOOKUP_TABLES: "true", BATCH_GATHER_MS: "0" } },
  { label: "batched", env: { ...BATCHED, LOOKUP_TABLES: "true", BATCH_GATHER_MS: process.env.BATCH_GATHER_MS ?? "60" } },
] as const;

async function measure(design: (typeof DESIGNS)[number], line: (design: string, outcome: string, clients: number, cost: Cost) => void): Promise<void> {
  const bench = await startBenchMarketplace({
    name: "cost",
    // The refunded row's calls ask the echo agent for an answer over this size, which the relayer
    // refuses (creator_error) and refunds; the circuit breaker must not pause the agent meanwhile.
    relayer_env: { CREATOR_MAX_RESPONSE_BYTES: "1024", CIRCUIT_BREAKER_FAILURES: "1000000", ...design.env },
  });
  const { marketplace } = bench;
  try {
    const echo = marketplace.agents.find((agent) => agent.slug === "echo")!;
    const connection = new Connection(marketplace.rpc_url, "confirmed");
    // The program's address on this chain, as the relayer serves it.
    const served = (await (await fetch(`${marketplace.relayer_url}/v1/marketplace`)).json()) as { networks: { program_id: string }[] };
    const programId = new PublicKey(served.networks[0]!.program_id);
    const call = (parameters: Record<string, unknown>) => () =>
      post(
        `${marketplace.relayer_url}/v1/agents/${echo.address}/execute`,
        { authorization: `Bearer ${marketplace.api_key}` },
        JSON.stringify({ task: "cost", parameters: { nonce: randomBytes(4).toString("hex"), ...parameters } }),
      );
    const paid = call({});
    await run(8, 32, 200, paid);
    for (const clients of [1, 32]) {
      const { ids, statuses } = await run(clients, clients === 1 ? Math.max(1, CALLS / 4) : CALLS, 200, paid);
      if (statuses.size > 1) console.error(`· statuses at ${clients} clients: ${JSON.stringify([...statuses])}`);
      line(design.label, "settled", clients, await chainCost(connection, programId, ids));
    }

    // The echo agent's answer, past the relayer's size limit: each call is opened, refused and refunded.
    const oversized = call({ padding: "x".repeat(2048) });
    for (const clients of [1, 32]) {
      const refunded = await run(clients, clients === 1 ? REFUNDED_CALLS : CALLS, 502, oversized);
      line(design.label, "refunded", clients, await chainCost(connection, programId, refunded.ids));
      if (refunded.statuses.size > 1) console.error(`· statuses of the refunded row at ${clients} clients: ${JSON.stringify([...refunded.statuses])}`);
    }
  } finally {
    await bench.stop();
  }
}

/** The floor under the measured rows: each transaction kind at its fullest, then a call with every batch full. */
function printFeeFloor(): void {
  const floor = feeFloor();
  console.log("Full batches (v0, the agent's fixed accounts from its lookup table; executions a packet holds, and the most the relayer sends in one):");
  console.log("transaction                                                          fits   limit   signatures   fee lamports/exec");
  for (const batch of floor.batches) {
    console.log(
      `${batch.kind.padEnd(67)}  ${String(batch.fits).padStart(4)}   ${String(batch.limit ?? "-").padStart(5)}   ${String(batch.signatures).padStart(10)}   ${String(batch.fee_lamports_per_execution).padStart(17)}`,
    );
  }
  console.log(
    `every batch full: settled ${floor.settled_lamports} lamports (break-even ${breakEvenUsdc(floor.settled_lamports).toFixed(4)} USDC), ` +
      `refunded ${floor.refunded_lamports}; settled with the signature carried unverified ${floor.settled_unverified_lamports}\n`,
  );
}

async function main(): Promise<void> {
  printFeeFloor();
  console.log(`On-chain cost of an execution through the relayer (localnet, 100 ms slots); fees counted from the chain`);
  console.log(`break-even price: the call price whose ${FEE_BPS / 100}% fee pays the network fees, at ${SOL_USD} USD per SOL\n`);
  console.log(`priced: the same transactions with a priority fee of ${UNIT_PRICE_MICRO_LAMPORTS} micro-lamports a unit, on the units they asked for\n`);
  console.log(
    "design     outcome    clients   executions   transactions   signatures/exec   fee lamports/exec   units/exec   units asked/exec   priced lamports/exec   break-even USDC",
  );
  const line = (design: string, outcome: string, clients: number, cost: Cost) =>
    console.log(
      `${design.padEnd(9)}  ${outcome.padEnd(9)}  ${String(clients).padStart(7)}   ${String(cost.executions).padStart(10)}   ${String(cost.transactions).padStart(12)}` +
      `   ${cost.signatures_per_execution.toFixed(2).padStart(15)}   ${cost.fee_lamports_per_execution.toFixed(0).padStart(17)}` +
      `   ${cost.units_per_execution.toFixed(0).padStart(10)}   ${cost.units_asked_per_execution.toFixed(0).padStart(16)}` +
      `   ${cost.priced_lamports_per_execution.toFixed(0).padStart(20)}   ${breakEvenUsdc(cost.fee_lamports_per_execution).toFixed(4).padStart(15)}`,
    );
  try {
    for (const design of DESIGNS) await measure(design, line);
  } finally {
    keptAlive.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
