// The wallet's API keys from the relayer, every page of them.
import type { ApiKey, WalletSession } from "@agent-market/client";

export async function allKeys(session: WalletSession): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  for await (const page of session.keys.pages({ limit: 100 })) keys.push(...page.data);
  return keys;
}
