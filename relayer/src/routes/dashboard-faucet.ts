// POST /dashboard-faucet, on localnet only (DASHBOARD_LOCALNET): the dashboard's "Fund with test
// SOL and USDC" button. It tops the signed-in wallet up from the local chain's faucet (SOL for
// fees, test USDC to pay agents) so that a newcomer who signs in with a fresh wallet can run an
// agent at once. The page never calls the chain's development methods itself: the relayer does,
// for the session's own wallet only, and only up to fixed amounts, so calling it again and again
// leaves the wallet where one call does.
import { PublicKey } from "@solana/web3.js";
import { formatUsdc } from "@agent-market/program";

import type { Services } from "../app-services.js";
import { ApiError } from "../errors.js";
import { requireSession } from "../http/auth.js";
import type { RouteApp } from "../http/route-app.js";

/** The SOL a wallet is topped up to: hundreds of thousands of transaction fees. */
export const FAUCET_SOL_LAMPORTS = 2_000_000_000n;
/**
 * The test USDC a wallet is topped up to: enough to list an agent (the local market's minimum
 * collateral is 100 USDC) and still pay for hundreds of runs, top-ups after a slash included.
 */
export const FAUCET_USDC = 1_000_000_000n;
const CONFIRM_TIMEOUT_MS = 20_000;

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const answer = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  }).catch(() => null);
  if (answer === null) throw new ApiError("chain_unavailable");
  const body = (await answer.json().catch(() => null)) as { result?: T; error?: { message: string } } | null;
  if (body === null || body.error !== undefined || body.result === undefined) throw new ApiError("chain_unavailable");
  return body.result;
}

async function confirmed(url: string, signature: string): Promise<void> {
  const deadline = Date.now() + CONFIRM_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const { value } = await rpc<{ value: ({ confirmationStatus?: string; err: unknown } | null)[] }>(url, "getSignatureStatuses", [[signature]]);
    const status = value[0];
    if (status?.err) throw new ApiError("chain_unavailable");
    if (status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized") return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new ApiError("chain_unavailable");
}

export function registerDashboardFaucet(app: RouteApp, services: Services): void {
  const rpcUrl = services.config.dashboard?.localnet ? services.config.networks.devnet?.rpc_url : undefined;
  if (rpcUrl === undefined) return;
  const node: string = rpcUrl;
  // Calls for one wallet at once share one top-up: each would read the same low balance and
  // mint again.
  const inFlight = new Map<string, Promise<unknown>>();
  app.post("/dashboard-faucet", { schema: { hide: true }, preHandler: requireSession(services.signIn) }, async (request) => {
    const wallet = request.walletSession!.wallet;
    let topUp = inFlight.get(wallet);
    if (topUp === undefined) {
      topUp = fund(wallet).finally(() => inFlight.delete(wallet));
      inFlight.set(wallet, topUp);
    }
    return topUp;
  });

  async function fund(wallet: string) {
    const before = await services.chain.walletFunding("devnet", new PublicKey(wallet));
    const lamports = BigInt((await rpc<{ value: number }>(node, "getBalance", [wallet, { commitment: "confirmed" }])).value);
    const sent: string[] = [];
    if (lamports < FAUCET_SOL_LAMPORTS) {
      sent.push(await rpc<string>(node, "requestAirdrop", [wallet, Number(FAUCET_SOL_LAMPORTS - lamports)]));
    }
    if (before.balance_usdc < FAUCET_USDC) {
      sent.push((await rpc<{ signature: string }>(node, "localnet_mintUsdc", [wallet, Number(FAUCET_USDC - before.balance_usdc)])).signature);
    }
    for (const signature of sent) await confirmed(node, signature);
    return {
      object: "test_funds",
      wallet,
      sol_lamports: String(lamports < FAUCET_SOL_LAMPORTS ? FAUCET_SOL_LAMPORTS : lamports),
      balance_usdc: formatUsdc(before.balance_usdc < FAUCET_USDC ? FAUCET_USDC : before.balance_usdc),
    };
  }
}
