// Disputes from the web: evidence kept by the relayer and checked here against its hash, and the
// two on-chain steps this page builds for the wallet — the payer's open_dispute of the
// settlement's leaf in its agent's receipt log, binding that hash, and the arbiter's
// resolve_dispute of that leaf (agent, leaf index). The relayer reports the outcome; the program
// decides it.
import type { EvidenceCreated, WalletSession } from "@agent-market/client";

import type { ConnectedWallet } from "../wallet/wallet.js";
import { base64Encode } from "../wallet/base58.js";
import { chainNowSecs, freshMarket, signAndSendInstructions, tokenBalance, type Chain } from "./chain.js";

/** What the relayer takes per dispute submission (docs/api.md, "Disputes"). */
export const MAX_ATTACHMENTS = 5;
export const MAX_ATTACHMENT_BYTES = 1024 * 1024;
export const MAX_STATEMENT_CHARS = 10_000;

export interface EvidenceFile {
  name: string;
  content_type: string;
  content: Uint8Array;
}

export async function readEvidenceFile(file: File): Promise<EvidenceFile> {
  return { name: file.name, content_type: file.type || "application/octet-stream", content: new Uint8Array(await file.arrayBuffer()) };
}

/** Why these inputs would be refused, before anything is sent; null when they are fine. */
/** Each side is asked for its own story: the payer what went wrong, the creator why the answer stands. */
export function evidenceProblem(statement: string, files: readonly EvidenceFile[], side: "payer" | "creator" = "payer"): string | null {
  if (statement.trim() === "") {
    return side === "payer" ? "Write a statement: what went wrong, and what you expected." : "Write your answer: what the agent was asked, and why its result stands.";
  }
  if (statement.length > MAX_STATEMENT_CHARS) return `The statement has ${statement.length} characters; at most ${MAX_STATEMENT_CHARS.toLocaleString("en")} are kept.`;
  if (files.length > MAX_ATTACHMENTS) return `Attach at most ${MAX_ATTACHMENTS} files.`;
  const big = files.find((f) => f.content.length > MAX_ATTACHMENT_BYTES);
  if (big !== undefined) return `${big.name} is over 1 MiB.`;
  return null;
}

/**
 * Keeps the statement and files with the relayer, then recomputes their evidence hash here: a
 * relayer answering another hash than the files' own would have the payer bind the wrong one.
 */
export async function submitEvidence(session: WalletSession, executionId: string, statement: string, files: readonly EvidenceFile[]): Promise<EvidenceCreated> {
  await import("./buffer-shim.js");
  const { attachmentDigest, evidenceHash, toHex } = await import("@agent-market/program");
  const created = await session.disputes.submitEvidence({
    execution_id: executionId,
    statement,
    attachments: files.map((f) => ({ name: f.name, content_type: f.content_type, content_base64: base64Encode(f.content) })),
  });
  const expected = toHex(evidenceHash(statement, files.map((f) => attachmentDigest(f.name, f.content_type, f.content))));
  if (created.evidence_hash !== expected) {
    throw new Error(`The relayer answered evidence hash ${created.evidence_hash}, but the statement and files hash to ${expected}. Nothing was signed.`);
  }
  return created;
}

export interface DisputeWindow {
  /** The settlement's leaf was found (with its proof): false once its tree's root is no longer held. */
  receiptExists: boolean;
  disputed: boolean;
  endsAtSecs: number;
  nowSecs: number;
}

/**
 * The settlement's leaf and proof (docs/dashboard.md, "Disputes from the web"): from the indexer
 * when the relayer names one, else rebuilt from the chain's history of the agent's receipt log.
 */
function disputeRouteOf(chain: Chain, executionId: string, agent: string) {
  const { disputeRoute, fetchLoggedReceipt, parseExecutionId } = chain.program;
  const bytes = parseExecutionId(executionId);
  if (!bytes) throw new Error(`${executionId} is not an execution id.`);
  const graphqlUrl = chain.graphqlUrl;
  return disputeRoute(chain.connection, bytes, {
    programId: chain.programId,
    source:
      graphqlUrl === null
        ? { kind: "chain", agent: new chain.web3.PublicKey(agent) }
        : { kind: "indexer", loggedReceipt: () => fetchLoggedReceipt(graphqlUrl, executionId) },
  });
}

export async function disputeWindow(chain: Chain, executionId: string, agent: string): Promise<DisputeWindow> {
  const [route, market, nowSecs] = await Promise.all([disputeRouteOf(chain, executionId, agent), freshMarket(chain), chainNowSecs(chain)]);
  if (route === null) return { receiptExists: false, disputed: false, endsAtSecs: 0, nowSecs };
  return { receiptExists: true, disputed: route.disputed, endsAtSecs: Number(route.leaf.settledAt) + market.disputeWindowSecs, nowSecs };
}

/** The payer's open_dispute of the settlement's leaf, binding the evidence hash the relayer keeps. */
export async function openDispute(chain: Chain, wallet: ConnectedWallet, executionId: string, agent: string, evidenceHashHex: string): Promise<string> {
  const { fromHex, openDisputeFor } = chain.program;
  const route = await disputeRouteOf(chain, executionId, agent);
  if (route === null) throw new Error(`${executionId} has no leaf in its agent's receipt log to dispute.`);
  const payer = new chain.web3.PublicKey(wallet.address);
  return signAndSendInstructions(chain, wallet, [openDisputeFor(route, { payer, evidenceHash: fromHex(evidenceHashHex), programId: chain.programId })]);
}

/** Whether this wallet can resolve: the market names one arbiter. */
export async function arbiterOf(chain: Chain): Promise<string> {
  return (await freshMarket(chain)).arbiter.toBase58();
}

export interface Resolution {
  signature: string;
  /** What left the agent's collateral vault, and what reached the payer's token account. */
  slashedUsdc: bigint;
  payerReceivedUsdc: bigint;
}

/**
 * The arbiter's resolve_dispute of the dispute of leaf `leafIndex` of `agent`'s receipt log:
 * upheld moves up to `slashUsdc` of the collateral to the payer. The dispute stays, resolved,
 * until anyone closes it after the leaf's window (its rent goes back to the payer).
 */
export async function resolveDispute(chain: Chain, wallet: ConnectedWallet, agent: string, leafIndex: bigint, upheld: boolean, slashUsdc: bigint): Promise<Resolution> {
  const { collateralVaultPda, disputePda, fetchDispute, resolveDisputeInstruction } = chain.program;
  const agentKey = new chain.web3.PublicKey(agent);
  const market = await freshMarket(chain);
  if (market.arbiter.toBase58() !== wallet.address) throw new Error(`${wallet.address} is not the market's arbiter (${market.arbiter.toBase58()}).`);
  const open = await fetchDispute(chain.connection, disputePda(agentKey, leafIndex, chain.programId), { programId: chain.programId });
  if (open === null || open.resolved) throw new Error(`No open dispute of leaf ${leafIndex} of ${agent}: it was resolved already.`);
  const vault = collateralVaultPda(agentKey, chain.programId);
  const [vaultBefore, payerBefore] = await Promise.all([tokenBalance(chain, vault), tokenBalance(chain, open.payerTokenAccount)]);
  const signature = await signAndSendInstructions(chain, wallet, [
    resolveDisputeInstruction({
      arbiter: market.arbiter,
      usdcMint: market.usdcMint,
      agent: agentKey,
      leafIndex,
      payerTokenAccount: open.payerTokenAccount,
      upheld,
      slashUsdc: upheld ? slashUsdc : 0n,
      programId: chain.programId,
    }),
  ]);
  const [vaultAfter, payerAfter] = await Promise.all([tokenBalance(chain, vault), tokenBalance(chain, open.payerTokenAccount)]);
  return { signature, slashedUsdc: vaultBefore - vaultAfter, payerReceivedUsdc: payerAfter - payerBefore };
}

/** Where the browser downloads an attachment: the session cookie authorises it on this origin. */
export function attachmentUrl(executionId: string, evidenceId: string, index: number): string {
  return `/v1/disputes/${encodeURIComponent(executionId)}/evidence/${encodeURIComponent(evidenceId)}/attachments/${index}`;
}
