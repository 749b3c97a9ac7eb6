import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";

import { formatUsdc, type Dispute, type WalletSession } from "@agent-market/client";
import {
  attachmentDigest,
  closeDisputeInstruction,
  collateralVaultPda,
  disputeRoute,
  evidenceHash,
  fetchAgent,
  fetchDisputesOfExecution,
  fetchLoggedReceipt,
  fromHex,
  openDisputeFor,
  parseAddress,
  parseDecimalU64,
  parseExecutionId,
  resolveDisputeInstruction,
  toHex,
  type FoundDispute,
  type LeafSource,
} from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";
import { getAccount } from "@solana/spl-token";

import { chainNow, connect, duration, market, signAndSend } from "../chain.js";
import { readConfig } from "../config.js";
import { indexerUrl } from "../indexer.js";
import { CliError, output, UsageError, type Command, type Io } from "../io.js";
import { keypairOption } from "../keyfile.js";
import { parse, required, usdcOption } from "../options.js";
import { programIdOption } from "../program-id.js";
import { storedSession } from "../session.js";
import { table } from "../table.js";

const usage = `agent-market dispute open <execution id> (--statement <text> | --statement-file <file>) [--attach <file>]… [--answer]
                          [--keypair <wallet file>] [--rpc <url>] [--api <url>]
                          [--indexer <url> | --agent <address> [--nonce <escrow nonce>]]
                          [--program-id <address>] [--json]
agent-market dispute show <execution id> [--api <url>] [--json]
agent-market dispute list [--role payer|creator|arbiter] [--state open|resolved] [--api <url>] [--json]
agent-market dispute resolve <execution id> (--uphold --slash <usdc> | --reject) --keypair <arbiter file> [--leaf <index>]
                             [--rpc <url>] [--program-id <address>] [--json]
agent-market dispute close <execution id> --keypair <any wallet file> [--leaf <index>] [--rpc <url>] [--program-id <address>] [--json]

open: the payer contests a settled execution within the market's dispute window. The statement
and up to 5 files (1 MiB each) go to the relayer with the wallet's session (agent-market login);
the command checks the evidence hash it answers against the files, then signs open_dispute with
that hash (the wallet's keypair, the one given to login unless --keypair) and sends it to the RPC.
Every settlement is a leaf of its agent's receipt log: open_dispute carries the leaf and its
Merkle proof, read from the indexer's GraphQL (--indexer, else $AGENT_MARKET_INDEXER_URL, else
the indexer the relayer names) or rebuilt from the chain's history of the agent's receipt log
instead (--agent, the agent
account the execution ran on: agent-market executions show names it; --nonce picks one escrow of
an execution id opened more than once, else the latest this wallet paid). The program checks the
proof either way.
A creator answers a dispute on its agent with the same command and --answer: the statement is
kept and hashed, nothing is signed.
show, list: the dispute as the chain has it, with the evidence (list: --role payer by default).
resolve: the market's arbiter rules. --uphold --slash moves up to that much USDC of the agent's
collateral to the payer; --reject moves nothing. The dispute is found on chain from the execution
id; --leaf picks one when the id was settled, and disputed, more than once.
close: once resolved and its dispute window has passed, anyone returns the dispute's rent to the
payer (the keypair pays the fee).
--program-id (open, resolve): the program's address on that network (else
$AGENT_MARKET_PROGRAM_ID, else the IDL's).`;

/** Media types of the files people attach most, by extension; anything else is octet-stream. */
const CONTENT_TYPES: Record<string, string> = {
  ".txt": "text/plain; charset=utf-8",
  ".log": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".json": "application/json",
  ".csv": "text/csv; charset=utf-8",
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

function executionIdOf(text: string | undefined): { id: string; bytes: Uint8Array } {
  const id = required(text, "<execution id>", usage);
  const bytes = parseExecutionId(id);
  if (!bytes) throw new UsageError(`${id} is not an execution id (exec_…)`, usage);
  return { id, bytes };
}

async function readAttachment(path: string) {
  let content: Buffer;
  try {
    content = await readFile(path);
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
  const name = basename(path);
  const content_type = CONTENT_TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
  return { name, content_type, content };
}

function disputeLines(d: Dispute): string[] {
  const rows: string[][] = [
    ["execution", d.execution_id],
    ["state", d.state],
    ["agent", d.agent],
    ["payer", d.payer],
    ["creator", d.creator ?? "unknown"],
    ["amount", `${d.amount_usdc} USDC`],
  ];
  if (d.slashed_usdc !== null) rows.push(["slashed", `${d.slashed_usdc} USDC`]);
  if (d.evidence_hash !== null) rows.push(["evidence hash", d.evidence_hash]);
  if (d.opened_at !== null) rows.push(["opened", d.opened_at]);
  if (d.resolved_at !== null) rows.push(["resolved", `${d.resolved_at} (${d.resolve_transaction ?? "?"})`]);
  const lines = table(["", ""], rows).slice(1);
  for (const e of d.evidence) {
    lines.push("", `${e.role} ${e.wallet} at ${e.created_at}${e.bound_on_chain ? ", bound on chain" : ""}`, `  hash ${e.evidence_hash}`);
    for (const line of e.statement.split("\n")) lines.push(`  > ${line}`);
    for (const a of e.attachments) lines.push(`  [${a.index}] ${a.name} (${a.content_type}, ${a.size_bytes} bytes, sha256 ${a.sha256})`);
  }
  return lines;
}

async function open(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      statement: { type: "string" },
      "statement-file": { type: "string" },
      attach: { type: "string", multiple: true },
      answer: { type: "boolean", default: false },
      keypair: { type: "string" },
      rpc: { type: "string" },
      api: { type: "string" },
      indexer: { type: "string" },
      agent: { type: "string" },
      nonce: { type: "string" },
      "program-id": { type: "string" },
    },
    usage,
    1,
  );
  const { id, bytes } = executionIdOf(positionals[0]);
  if ((values.statement === undefined) === (values["statement-file"] === undefined)) {
    throw new UsageError("give --statement or --statement-file (one of them)", usage);
  }
  const givenIndexer = values.indexer ?? io.env.AGENT_MARKET_INDEXER_URL;
  if (values.answer && (values.agent !== undefined || values.nonce !== undefined)) {
    throw new UsageError("--answer signs nothing: leave out --agent and --nonce", usage);
  }
  if (values.nonce !== undefined && values.agent === undefined) {
    throw new UsageError("--nonce picks an escrow in the chain's receipt log history: give --agent too", usage);
  }
  if (givenIndexer !== undefined && (values.agent !== undefined || values.nonce !== undefined)) {
    throw new UsageError("--agent and --nonce rebuild the proof from the chain: leave out --indexer (and AGENT_MARKET_INDEXER_URL)", usage);
  }
  const agentBytes = values.agent === undefined ? null : parseAddress(values.agent);
  if (values.agent !== undefined && !agentBytes) throw new UsageError(`--agent ${values.agent} is not a base58 address`, usage);
  const nonce = values.nonce === undefined ? undefined : parseDecimalU64(values.nonce);
  if (nonce === null) throw new UsageError(`--nonce ${values.nonce} is not the decimal string of a u64`, usage);
  const programId = programIdOption(io, values["program-id"], usage);
  const statement = values.statement ?? (await readFile(values["statement-file"]!, "utf8").catch((error: Error) => {
    throw new CliError(`cannot read ${values["statement-file"]}: ${error.message}`);
  }));
  const files = await Promise.all((values.attach ?? []).map(readAttachment));
  const config = await readConfig(io);
  const session: WalletSession = await storedSession(io, config, values.api);
  // Without --agent the proof comes from an indexer: the one given, else the one the relayer names.
  const indexer = values.answer || values.agent !== undefined ? undefined : await indexerUrl(io, givenIndexer, values.api, config);

  // The payer's wallet must sign; check it before anything is kept.
  const keypair = values.answer ? null : await keypairOption(values.keypair, config.keypair);
  if (keypair && keypair.publicKey.toBase58() !== session.address) {
    throw new CliError(`the keypair is ${keypair.publicKey.toBase58()}, but the session is ${session.address}`, "pass the signed-in wallet's --keypair");
  }
  const connection = keypair ? connect(io, values.rpc, config) : null;
  // Only the payer's open signs and so needs the leaf: a creator's answer reads nothing on chain.
  const source: LeafSource | null = !keypair
    ? null
    : indexer !== undefined
      ? { kind: "indexer", loggedReceipt: () => fetchLoggedReceipt(indexer, id) }
      : { kind: "chain", agent: new PublicKey(agentBytes!), payer: keypair.publicKey, ...(nonce === undefined ? {} : { nonce }) };
  const route = connection && source ? await disputeRoute(connection, bytes, { programId, source }) : null;
  if (connection && source) {
    if (!route) {
      throw new CliError(
        source.kind === "indexer"
          ? `the indexer knows no settlement of ${id}`
          : `the receipt log of ${source.agent.toBase58()} holds no provable settlement of ${id}${nonce === undefined ? " paid by this wallet" : ` with nonce ${nonce}`}`,
      );
    }
    if (route.disputed) throw new CliError(`${id} (leaf ${route.leafIndex}) is disputed already`, `agent-market dispute show ${id}`);
    const window_ends_at = route.leaf.settledAt + BigInt((await market(connection, programId)).disputeWindowSecs);
    const now = await chainNow(connection);
    if (now > window_ends_at) throw new CliError(`the dispute window of ${id} closed ${duration(now - window_ends_at)} ago`);
  }

  const created = await session.disputes.submitEvidence({
    execution_id: id,
    statement,
    attachments: files.map((f) => ({ name: f.name, content_type: f.content_type, content_base64: f.content.toString("base64") })),
  });
  const expected = toHex(evidenceHash(statement, files.map((f) => attachmentDigest(f.name, f.content_type, f.content))));
  if (created.evidence_hash !== expected) {
    throw new CliError(`the relayer answered evidence hash ${created.evidence_hash}, but the statement and files hash to ${expected}`, "nothing was signed; report it to the marketplace");
  }
  if (!keypair || !connection || !route) {
    output(io, created, () => [`Kept ${created.evidence_id} as the ${created.role}'s evidence on ${id}, hash ${created.evidence_hash}`]);
    return;
  }
  const signature = await signAndSend(
    io,
    connection,
    keypair,
    programId,
    [openDisputeFor(route, { programId, payer: keypair.publicKey, evidenceHash: fromHex(created.evidence_hash) })],
    [
      `open_dispute on ${id} (agent ${route.agent.toBase58()}, ${formatUsdc(route.leaf.amountUsdc)} USDC paid, escrow nonce ${route.leaf.nonce}, leaf ${route.leafIndex} of its receipt log, proof from the ${route.source})`,
      `evidence hash ${created.evidence_hash} (${created.evidence_id}: the statement and ${files.length} file(s))`,
      "the dispute account's rent comes from this wallet and goes back to it once resolved and past the dispute window (agent-market dispute close)",
    ],
  );
  output(io, { ...created, transaction: signature }, () => [`Opened the dispute on ${id} with ${created.evidence_id}, transaction ${signature}`]);
}

async function resolve(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      uphold: { type: "boolean", default: false },
      reject: { type: "boolean", default: false },
      slash: { type: "string" },
      keypair: { type: "string" },
      leaf: { type: "string" },
      rpc: { type: "string" },
      "program-id": { type: "string" },
    },
    usage,
    1,
  );
  const { id, bytes } = executionIdOf(positionals[0]);
  const leaf = leafOption(values.leaf);
  if (values.uphold === values.reject) throw new UsageError("give --uphold --slash <usdc> or --reject", usage);
  if (values.reject && values.slash !== undefined) throw new UsageError("--reject slashes nothing: leave out --slash", usage);
  const slash = values.uphold ? usdcOption(required(values.slash, "--slash", usage), "--slash", usage) : 0n;
  if (values.uphold && slash === 0n) throw new UsageError("--slash must be more than 0 to uphold", usage);
  const programId = programIdOption(io, values["program-id"], usage);
  const config = await readConfig(io);
  const arbiter = await keypairOption(values.keypair, undefined);
  const connection = connect(io, values.rpc, config);
  const found = await market(connection, programId);
  if (!found.arbiter.equals(arbiter.publicKey)) {
    throw new CliError(`${arbiter.publicKey.toBase58()} is not the market's arbiter (${found.arbiter.toBase58()})`, "pass the arbiter's --keypair");
  }
  const { dispute: open } = pickDispute(id, await fetchDisputesOfExecution(connection, bytes, { programId }), leaf, false);
  const agent = await fetchAgent(connection, open.agent, { programId });
  if (!agent) throw new CliError(`the agent ${open.agent.toBase58()} has no account`);
  const collateralVault = collateralVaultPda(open.agent, programId);
  const collateralBefore = (await getAccount(connection, collateralVault)).amount;
  const payerBefore = (await getAccount(connection, open.payerTokenAccount)).amount;
  const slashed = slash < agent.collateralUsdc ? slash : agent.collateralUsdc;
  const signature = await signAndSend(
    io,
    connection,
    arbiter,
    programId,
    [
      resolveDisputeInstruction({
        programId,
        arbiter: arbiter.publicKey,
        usdcMint: found.usdcMint,
        agent: open.agent,
        leafIndex: open.leafIndex,
        payerTokenAccount: open.payerTokenAccount,
        upheld: values.uphold,
        slashUsdc: slash,
      }),
    ],
    [
      `resolve_dispute on ${id}: ${values.uphold ? "uphold" : "reject"} (agent ${open.agent.toBase58()}, leaf ${open.leafIndex}, payer ${open.payer.toBase58()})`,
      values.uphold
        ? `moves ${formatUsdc(slashed)} USDC of the agent's ${formatUsdc(agent.collateralUsdc)} USDC collateral to ${open.payerTokenAccount.toBase58()}`
        : "moves no USDC",
    ],
  );
  const collateralAfter = (await getAccount(connection, collateralVault)).amount;
  const payerAfter = (await getAccount(connection, open.payerTokenAccount)).amount;
  const result = {
    execution_id: id,
    state: values.uphold ? "upheld" : "rejected",
    slashed_usdc: formatUsdc(collateralBefore - collateralAfter),
    payer_received_usdc: formatUsdc(payerAfter - payerBefore),
    collateral_usdc: formatUsdc(collateralAfter),
    transaction: signature,
  };
  output(io, result, () => [
    `${values.uphold ? "Upheld" : "Rejected"} the dispute on ${id}: ${result.slashed_usdc} USDC slashed to the payer, ${result.collateral_usdc} USDC collateral left, transaction ${signature}`,
  ]);
}

function leafOption(text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  const leaf = parseDecimalU64(text);
  if (leaf === null) throw new UsageError(`--leaf ${text} is not the decimal string of a u64`, usage);
  return leaf;
}

/** The one dispute of `id` to act on: resolved or not as `resolved` says, at `leaf` if given. */
function pickDispute(id: string, found: FoundDispute[], leaf: bigint | undefined, resolved: boolean): FoundDispute {
  const state = resolved ? "resolved" : "open";
  const candidates = found.filter((f) => f.dispute.resolved === resolved && (leaf === undefined || f.dispute.leafIndex === leaf));
  if (candidates.length === 0) {
    throw new CliError(`no ${state} dispute on ${id}${leaf === undefined ? "" : ` at leaf ${leaf}`}`, `agent-market dispute show ${id}`);
  }
  if (candidates.length > 1) {
    const leaves = candidates.map((f) => f.dispute.leafIndex).join(", ");
    throw new CliError(`${id} has ${candidates.length} ${state} disputes, at leaves ${leaves}`, "pick one with --leaf <index>");
  }
  return candidates[0]!;
}

async function close(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(
    args,
    { keypair: { type: "string" }, leaf: { type: "string" }, rpc: { type: "string" }, "program-id": { type: "string" } },
    usage,
    1,
  );
  const { id, bytes } = executionIdOf(positionals[0]);
  const leaf = leafOption(values.leaf);
  const programId = programIdOption(io, values["program-id"], usage);
  const config = await readConfig(io);
  const sender = await keypairOption(values.keypair, config.keypair);
  const connection = connect(io, values.rpc, config);
  const { dispute: resolved } = pickDispute(id, await fetchDisputesOfExecution(connection, bytes, { programId }), leaf, true);
  const window_ends_at = resolved.settledAt + BigInt((await market(connection, programId)).disputeWindowSecs);
  const now = await chainNow(connection);
  if (now <= window_ends_at) throw new CliError(`the dispute window of ${id} ends in ${duration(window_ends_at - now + 1n)}`, "close it after that");
  const signature = await signAndSend(
    io,
    connection,
    sender,
    programId,
    [closeDisputeInstruction({ programId, agent: resolved.agent, leafIndex: resolved.leafIndex, payer: resolved.payer })],
    [`close_dispute on ${id} (agent ${resolved.agent.toBase58()}, leaf ${resolved.leafIndex}): its rent goes back to ${resolved.payer.toBase58()}`],
  );
  const result = { execution_id: id, leaf_index: resolved.leafIndex.toString(), payer: resolved.payer.toBase58(), transaction: signature };
  output(io, result, () => [`Closed the dispute on ${id} (leaf ${result.leaf_index}): its rent went back to ${result.payer}, transaction ${signature}`]);
}

export const dispute: Command = {
  name: "dispute",
  summary: "open, show, list, resolve and close disputes",
  usage,
  async run(args, io) {
    const [action, ...rest] = args;
    switch (action) {
      case "open":
        return open(rest, io);
      case "resolve":
        return resolve(rest, io);
      case "close":
        return close(rest, io);
      case "show": {
        const { values, positionals } = parse(rest, { api: { type: "string" } }, usage, 1);
        const { id } = executionIdOf(positionals[0]);
        const session = await storedSession(io, await readConfig(io), values.api);
        const found = await session.disputes.get(id);
        output(io, found, () => disputeLines(found));
        return;
      }
      case "list": {
        const { values } = parse(rest, { role: { type: "string", default: "payer" }, state: { type: "string" }, api: { type: "string" } }, usage);
        const role = values.role;
        if (role !== "payer" && role !== "creator" && role !== "arbiter") throw new UsageError("--role is payer, creator or arbiter", usage);
        const state = values.state;
        if (state !== undefined && state !== "open" && state !== "resolved") throw new UsageError("--state is open or resolved", usage);
        const session = await storedSession(io, await readConfig(io), values.api);
        const page = await session.disputes.list({ role, ...(state === undefined ? {} : { state }), limit: 100 });
        output(io, page.data, () =>
          table(
            ["EXECUTION", "STATE", "AMOUNT", "SLASHED", "AGENT", "OPENED"],
            page.data.map((d) => [d.execution_id, d.state, d.amount_usdc, d.slashed_usdc ?? "", d.agent, d.opened_at ?? ""]),
          ),
        );
        return;
      }
      default:
        throw new UsageError(action === undefined ? "dispute needs open, show, list, resolve or close" : `unknown dispute command ${action}`, usage);
    }
  },
};
