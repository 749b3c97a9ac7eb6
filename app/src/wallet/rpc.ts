// The two JSON-RPC calls the dashboard makes itself, on a local chain only: sending a signed
// transaction and waiting until it is confirmed.
async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result as T;
}

export async function sendAndConfirm(url: string, signedBase64: string): Promise<string> {
  const signature = await rpc<string>(url, "sendTransaction", [signedBase64, { encoding: "base64", preflightCommitment: "confirmed" }]);
  for (let attempt = 0; attempt < 100; attempt++) {
    const { value } = await rpc<{ value: ({ confirmationStatus?: string; err: unknown } | null)[] }>(url, "getSignatureStatuses", [[signature]]);
    const status = value[0];
    if (status?.err) throw new Error(`the transaction failed on chain: ${JSON.stringify(status.err)}`);
    if (status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized") return signature;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("the transaction was not confirmed within 20 s");
}
