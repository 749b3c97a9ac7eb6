// A receipt checked in this browser with @agent-market/client/verify: offline (hashes, the
// creator's signature, the listed signing key) and, where the page has an RPC address for the
// execution's network, against the chain as well, under that network's program id.
// Loaded on demand: the program's decoders are most of its weight.
import { AgentMarket, type Execution } from "@agent-market/client";
import type { ReceiptVerification } from "@agent-market/client/verify";

export async function verifyInBrowser(
  execution: Execution,
  options: { rpcUrl: string | null; signingKey?: string; request?: { task: string; parameters: Record<string, unknown> } },
): Promise<ReceiptVerification> {
  await import("./buffer-shim.js");
  const [{ verifyReceipt }, { Connection, PublicKey }] = await Promise.all([import("@agent-market/client/verify"), import("@solana/web3.js")]);
  let onChain = {};
  if (options.rpcUrl !== null) {
    const described = await new AgentMarket({ baseUrl: location.origin }).marketplace();
    const programId = described.networks.find((n) => n.name === execution.network)?.program_id;
    if (programId === undefined) throw new Error(`The relayer does not serve ${execution.network}.`);
    onChain = { connection: new Connection(options.rpcUrl, "confirmed"), programId: new PublicKey(programId) };
  }
  return verifyReceipt(execution, {
    ...(options.request ? { request: options.request } : {}),
    ...(options.signingKey ? { expectedSigningKey: options.signingKey } : {}),
    ...onChain,
  });
}
