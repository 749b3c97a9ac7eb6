// Disputes from the web: evidence kept by the relayer and checked here against its hash, and the
// two on-chain steps this page builds for the wallet — the payer's open_dispute (or
// open_dispute_from_log) binding that hash, the arbiter's resolve_dispute. The relayer reports
// the outcome; the program decides it.
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
  /**
   * What a dispute needs: the execution's Receipt account, or its leaf in the agent's receipt log
   * (settled by settle_batch). False once the window passed and the receipt was closed.
   */
  receiptExists: boolean;
  disputed: boolean;
  endsAtSecs: number;
  nowSecs: number;
}

/** How the execution is disputed (docs/dashboard.md, "Disputes from the web"): its receipt, or its leaf and proof from the indexer. */
function disputeRouteOf(chain: Chain, executionId: string) {
  const { disputeRoute, fetchLoggedReceipt, parseExecutionId } = chain.program;
  const bytes = parseExecutionId(executionId);
  if (!bytes) throw new Error(`${executionId} is not an execution id.`);
  return disputeRoute(chain.connection, bytes, {
    programId: chain.programId,
    loggedReceipt: async () => {
      if (chain.graphqlUrl === null) throw new Error(`${executionId} has no receipt account, and this relayer was started without INDEXER_GRAPHQL_URL, where its receipt log proof comes from.`);
      return fetchLoggedReceipt(chain.graphqlUrl, executionId);
    },
  });
}

export async function disputeWindow(chain: Chain, executionId: string): Promise<DisputeWindow> {
  const [route, market, nowSecs] = await Promise.all([disputeRouteOf(chain, executionId), freshMarket(chain), chainNowSecs(chain)]);
  if (route === null) return { receiptExists: false, disputed: false, endsAtSecs: 0, nowSecs };
  return { receiptExists: true, disputed: route.kind === "receipt" && route.disputed, endsAtSecs: Number(route.settledAt) + market.disputeWindowSecs, nowSecs };
}

/** The payer's open_dispute (or open_dispute_from_log for a batched settlement), binding the evidence hash the relayer keeps. */
export async function openDispute(chain: Chain, wallet: ConnectedWallet, executionId: string, evidenceHashHex: string): Promise<string> {
  const { fromHex, openDisputeFor, parseExecutionId } = chain.program;
  const route = await disputeRouteOf(chain, executionId);
  if (route === null) throw new Error(`${executionId} has no receipt on chain: its dispute window has passed.`);
  const payer = new chain.web3.PublicKey(wallet.address);
  return signAndSendInstructions(chain, wallet, [
    openDisputeFor(route, { payer, executionId: parseExecutionId(executionId)!, evidenceHash: fromHex(evidenceHashHex), programId: chain.programId }),
  ]);
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

/** The arbiter's resolve_dispute: upheld moves up to `slashUsdc` of the collateral to the payer. */
export async function resolveDispute(chain: Chain, wallet: ConnectedWallet, executionId: string, upheld: boolean, slashUsdc: bigint): Promise<Resolution> {
  const { collateralVaultPda, disputePda, fetchDispute, parseExecutionId, resolveDisputeInstruction } = chain.program;
  const bytes = parseExecutionId(executionId)!;
  const market = await freshMarket(chain);
  if (market.arbiter.toBase58() !== wallet.address) throw new Error(`${wallet.address} is not the market's arbiter (${market.arbiter.toBase58()}).`);
  const open = await fetchDispute(chain.connection, disputePda(bytes, chain.programId), { programId: chain.programId });
  if (open === null) throw new Error(`No open dispute on ${executionId}: it was resolved already.`);
  const vault = collateralVaultPda(open.agent, chain.programId);
  const [vaultBefore, payerBefore] = await Promise.all([tokenBalance(chain, vault), tokenBalance(chain, open.payerTokenAccount)]);
  const signature = await signAndSendInstructions(chain, wallet, [
    resolveDisputeInstruction({
      arbiter: market.arbiter,
      usdcMint: market.usdcMint,
      agent: open.agent,
      executionId: bytes,
      payer: open.payer,
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
