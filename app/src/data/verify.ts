// A receipt checked in this browser with @agent-market/client/verify: offline (hashes, the
// creator's signature, the listed signing key) and, where the page has an RPC address for the
// execution's network, against the chain as well, under that network's program id (for a batched
// settlement, its receipt log leaf and proof from the indexer against the log on chain).
// The relayer answers a run once its settlement is processed; the on-chain checks read it at
// `confirmed`, a slot or so later. Until then the check is "pending", not failed: the caller asks
// again. Loaded on demand: the program's decoders are most of its weight.
import { AgentMarket, type Execution } from "@agent-market/client";
import type { ReceiptVerification } from "@agent-market/client/verify";

export type BrowserVerification = { state: "pending" } | { state: "checked"; verification: ReceiptVerification };

export async function verifyInBrowser(
  execution: Execution,
  options: {
    rpcUrl: string | null;
    /** The indexer's GraphQL: an execution settled by settle_batch is checked against its receipt log leaf and proof. */
    indexerUrl?: string | null;
    signingKey?: string;
    request?: { task: string; parameters: Record<string, unknown> };
  },
): Promise<BrowserVerification> {
  await import("./buffer-shim.js");
  const [{ verifyReceipt }, { Connection, PublicKey }] = await Promise.all([import("@agent-market/client/verify"), import("@solana/web3.js")]);
  let onChain = {};
  if (options.rpcUrl !== null) {
    const described = await new AgentMarket({ baseUrl: location.origin }).marketplace();
    const programId = described.networks.find((n) => n.name === execution.network)?.program_id;
    if (programId === undefined) throw new Error(`The relayer does not serve ${execution.network}.`);
    const connection = new Connection(options.rpcUrl, "confirmed");
    const settlement = execution.transactions.settlement;
    if (settlement !== null) {
      const { value } = await connection.getSignatureStatus(settlement, { searchTransactionHistory: true });
      if (value === null || value.confirmationStatus === undefined || value.confirmationStatus === "processed") return { state: "pending" };
    }
    onChain = { connection, programId: new PublicKey(programId), ...(options.indexerUrl ? { indexerUrl: options.indexerUrl } : {}) };
  }
  const verification = await verifyReceipt(execution, {
    ...(options.request ? { request: options.request } : {}),
    ...(options.signingKey ? { expectedSigningKey: options.signingKey } : {}),
    ...onChain,
  });
  // Confirmed a moment ago, yet not served at `confirmed` by this RPC node yet: still pending.
  const notYet = verification.checks.find((check) => check.name === "settlement_transaction" && !check.ok && /\(yet\?\)$/.test(check.detail));
  return notYet !== undefined ? { state: "pending" } : { state: "checked", verification };
}
