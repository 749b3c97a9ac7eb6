// The agents a server offers as tools, chosen when it starts (addresses, a tag or a search) and
// read again on a timer: a listing whose name, description, price or schema changed, or an agent
// that joined or left the selection, changes the tool list, and the sessions are told.
import type { AgentMarket, Network } from "@agent-market/client";

import { agentTool, type AgentTool } from "./agent-tool.js";

export interface AgentSelection {
  network: Network;
  /** Agent addresses; when empty, the tag and the search choose. */
  agents: string[];
  tag?: string;
  search?: string;
}

/** At most this many agents as tools: a client gives every tool's schema to its model. */
export const MAX_AGENT_TOOLS = 50;

export class AgentCatalog {
  private tools_by_name = new Map<string, AgentTool>();
  private fingerprint = "";
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: AgentMarket,
    private readonly selection: AgentSelection,
    private readonly max_price_usdc: bigint,
  ) {}

  tools(): AgentTool[] {
    return [...this.tools_by_name.values()];
  }

  tool(name: string): AgentTool | undefined {
    return this.tools_by_name.get(name);
  }

  /** Reads the selection again; true when the tool list changed. */
  async refresh(): Promise<boolean> {
    const agents = this.selection.agents.length > 0
      ? await Promise.all(this.selection.agents.map((id) => this.client.agents.get(id, { network: this.selection.network })))
      : (
          await this.client.agents.list({
            network: this.selection.network,
            limit: MAX_AGENT_TOOLS,
            ...(this.selection.tag ? { tag: this.selection.tag } : {}),
            ...(this.selection.search ? { q: this.selection.search } : {}),
          })
        ).data;
    const tools = agents.filter((agent) => agent.status === "active").map((agent) => agentTool(agent, this.max_price_usdc));
    const fingerprint = JSON.stringify(tools.map((tool) => tool.definition));
    if (fingerprint === this.fingerprint) return false;
    this.fingerprint = fingerprint;
    this.tools_by_name = new Map(tools.map((tool) => [tool.definition.name, tool]));
    return true;
  }

  /** Refreshes every `interval_ms`, calling `changed` after a refresh that changed the list. */
  follow(interval_ms: number, changed: () => void, failed: (error: unknown) => void): void {
    const tick = () => {
      this.refresh().then(
        (isChanged) => {
          if (isChanged) changed();
        },
        failed,
      ).finally(() => {
        if (this.timer) this.timer = setTimeout(tick, interval_ms);
      });
    };
    this.timer = setTimeout(tick, interval_ms);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
