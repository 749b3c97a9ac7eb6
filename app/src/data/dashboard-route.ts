// The relayer's routes for this page alone, outside the public API (/dashboard-…, localnet only):
// posted with the wallet session, their refusals read as the API's errors are.
import { AgentMarketError, type WalletSession } from "@agent-market/client";

interface RefusalBody {
  error?: { code: string; type: string; message: string; param?: string; request_id?: string };
}

export async function postDashboardRoute<T>(session: WalletSession, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method: "POST",
    headers: { authorization: `Bearer ${session.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).catch(() => null);
  if (response === null) throw new AgentMarketError({ status: undefined, code: "connection_error", type: "connection_error", message: "could not reach the relayer" });
  const answer = (await response.json().catch(() => null)) as (T & RefusalBody) | null;
  if (!response.ok || answer === null || answer.error !== undefined) {
    const error = answer?.error;
    throw new AgentMarketError({
      status: response.status,
      code: error?.code ?? "internal_error",
      type: error?.type ?? "api_error",
      message: error?.message ?? `The relayer answered HTTP ${response.status} at ${path}.`,
      param: error?.param,
      ...(error?.request_id ? { requestId: error.request_id } : {}),
    });
  }
  return answer;
}
