// The JSON-RPC calls the dashboard makes itself: sending a signed transaction and waiting until it
// is confirmed, and reading a balance. Refusals come back as ChainError, never as the RPC's text.
import { ChainError } from "../data/chain-errors.js";

export async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  }).catch((error: unknown) => {
    throw new ChainError(error instanceof Error ? error.message : String(error));
  });
  const body = (await response.json().catch(() => null)) as { result?: T; error?: { message: string } } | null;
  if (body === null) throw new ChainError(`HTTP ${response.status}`);
  if (body.error) throw new ChainError(body.error.message);
  return body.result as T;
}

export async function sendAndConfirm(url: string, signedBase64: string): Promise<string> {
  const signature = await rpc<string>(url, "sendTransaction", [signedBase64, { encoding: "base64", preflightCommitment: "confirmed" }]);
  for (let attempt = 0; attempt < 100; attempt++) {
    const { value } = await rpc<{ value: ({ confirmationStatus?: string; err: unknown } | null)[] }>(url, "getSignatureStatuses", [[signature]]);
    const status = value[0];
    if (status?.err) throw new ChainError(`the transaction failed on chain: ${JSON.stringify(status.err)}`);
    if (status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized") return signature;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new ChainError("the transaction was not confirmed within 20 s");
}
