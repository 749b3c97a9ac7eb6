// A receipt checked in this browser with @agent-market/client/verify: offline (hashes, the
// creator's signature, the listed signing key) and, on localnet, against the chain as well.
// Loaded on demand: the program's decoders are most of its weight.
import type { Execution } from "@agent-market/client";
import type { ReceiptVerification } from "@agent-market/client/verify";

export async function verifyInBrowser(
  execution: Execution,
  options: { rpcUrl: string | null; signingKey?: string; request?: { task: string; parameters: Record<string, unknown> } },
): Promise<ReceiptVerification> {
  await import("./buffer-shim.js");
  const [{ verifyReceipt }, { Connection }] = await Promise.all([import("@agent-market/client/verify"), import("@solana/web3.js")]);
  return verifyReceipt(execution, {
    ...(options.request ? { request: options.request } : {}),
    ...(options.signingKey ? { expectedSigningKey: options.signingKey } : {}),
    ...(options.rpcUrl !== null ? { connection: new Connection(options.rpcUrl, "confirmed") } : {}),
  });
}
