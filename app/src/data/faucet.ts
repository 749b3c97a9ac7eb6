// On localnet, the relayer's faucet (POST /dashboard-faucet) tops the signed-in wallet up with test
// SOL for fees and test USDC to pay agents. The page never calls the chain's faucet itself.
import { AgentMarketError, type WalletSession } from "@agent-market/client";

export interface TestFunds {
  sol_lamports: string;
  balance_usdc: string;
}

export async function fundFromLocalFaucet(session: WalletSession): Promise<TestFunds> {
  const response = await fetch("/dashboard-faucet", { method: "POST", headers: { authorization: `Bearer ${session.token}` } }).catch(() => null);
  if (response === null) throw new AgentMarketError({ status: undefined, code: "connection_error", type: "connection_error", message: "could not reach the relayer" });
  const body = (await response.json().catch(() => null)) as (TestFunds & { error?: { code: string; type: string; message: string; request_id?: string } }) | null;
  if (!response.ok || body === null || body.error !== undefined) {
    const error = body?.error;
    throw new AgentMarketError({
      status: response.status,
      code: error?.code ?? "internal_error",
      type: error?.type ?? "api_error",
      message: error?.message ?? `The relayer's faucet answered HTTP ${response.status}.`,
      ...(error?.request_id ? { requestId: error.request_id } : {}),
    });
  }
  return body;
}
