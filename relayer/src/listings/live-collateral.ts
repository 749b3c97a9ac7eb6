// Each listed agent's collateral as its Agent account holds it now. The listing stores the figure
// the checklist verified, but the chain moves it afterwards (a top-up, an upheld dispute's slash, a
// withdrawal), and a listing must never show a collateral its agent no longer locks.
import { decodeAgent, LruMap, type NetworkName } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import type { ChainService } from "../chain/chain-service.js";
import { ApiError } from "../errors.js";

/** How long one read of an agent's collateral serves: a slash or top-up shows within this. */
export const COLLATERAL_MAX_AGE_MS = 1_000;
const COLLATERAL_CACHE_ENTRIES = 10_000;
/** The most accounts one getMultipleAccounts call may ask for. */
const ACCOUNTS_PER_CALL = 100;

export class LiveCollateral {
  private readonly reads = new LruMap<string, { collateral: Promise<bigint | null>; at_ms: number }>(COLLATERAL_CACHE_ENTRIES);

  constructor(private readonly chain: ChainService) {}

  /**
   * The collateral of each of `agents` (base units), null for one without an Agent account.
   * Agents read within COLLATERAL_MAX_AGE_MS are not asked again; the rest in one call per hundred.
   */
  async of(network: NetworkName, agents: string[]): Promise<Map<string, bigint | null>> {
    const missing = [...new Set(agents)].filter((agent) => {
      const cached = this.reads.get(`${network}/${agent}`);
      return !cached || Date.now() - cached.at_ms >= COLLATERAL_MAX_AGE_MS;
    });
    for (let at = 0; at < missing.length; at += ACCOUNTS_PER_CALL) {
      const chunk = missing.slice(at, at + ACCOUNTS_PER_CALL);
      const infos = this.read(network, chunk);
      chunk.forEach((agent, i) => {
        const key = `${network}/${agent}`;
        const collateral = infos.then((found) => (found[i] ? decodeAgent(found[i].data).collateralUsdc : null));
        this.reads.set(key, { collateral, at_ms: Date.now() });
        collateral.catch(() => this.reads.delete(key));
      });
    }
    const read = await Promise.all(agents.map((agent) => this.reads.get(`${network}/${agent}`)!.collateral));
    return new Map(agents.map((agent, i) => [agent, read[i] ?? null]));
  }

  private async read(network: NetworkName, agents: string[]) {
    try {
      return await this.chain.rpc(network).getMultipleAccounts(agents.map((agent) => new PublicKey(agent)), "confirmed");
    } catch (error) {
      throw new ApiError("chain_unavailable", `The ${network} RPC did not answer.`, undefined, undefined, error);
    }
  }
}
