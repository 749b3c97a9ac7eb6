// What the benchmarks that run a whole local marketplace share: the payer's allowance raised
// through the relayer as the dashboard does it. Their ports come from the service kit's freePort.
import http from "node:http";

import { Keypair, Transaction } from "@solana/web3.js";

/** Sets the wallet's allowance for the market to `amount_usdc`: signed in, built by the relayer, signed here. */
export async function raiseAllowance(relayer_url: string, rpc_url: string, wallet: Keypair, amount_usdc: string): Promise<void> {
  const { ed25519Sign } = await import("@agent-market/program");
  const { utils } = await import("@coral-xyz/anchor");
  const { Connection } = await import("@solana/web3.js");
  const post = async (path: string, body: unknown, token?: string) =>
    (await fetch(`${relayer_url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    }).then((r) => r.json())) as Record<string, string>;
  const challenge = await post("/v1/auth/nonce", { wallet: wallet.publicKey.toBase58() });
  const signature = utils.bytes.bs58.encode(ed25519Sign(wallet.secretKey, new TextEncoder().encode(challenge.message!)));
  const session = await post("/v1/auth/session", { message: challenge.message, signature });
  const unsigned = await post("/v1/wallet/allowance", { network: "devnet", amount_usdc }, session.token);
  const transaction = Transaction.from(Buffer.from(unsigned.transaction!, "base64"));
  transaction.partialSign(wallet);
  const connection = new Connection(rpc_url, "confirmed");
  const sent = await connection.sendRawTransaction(transaction.serialize());
  const latest = await connection.getLatestBlockhash();
  await connection.confirmTransaction({ signature: sent, ...latest }, "confirmed");
}

/**
 * POSTs JSON `body` on `agent`'s kept-alive connections (node:http: fetch costs the load generator
 * about twice the CPU a call) and reads the whole answer: its status and its JSON (null if none).
 */
export function postJson(agent: http.Agent, url: string, headers: Record<string, string>, body: string): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", agent, headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          let json: unknown = null;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            // not JSON: the status says what happened
          }
          resolve({ status: response.statusCode!, json });
        });
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}
