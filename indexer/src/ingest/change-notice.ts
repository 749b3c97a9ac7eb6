// What the writer tells every server of the network after a commit: which executions and agents
// changed, and the new finalized watermark. Sent with pg_notify inside the writing transaction,
// so PostgreSQL delivers it only if, and when, the transaction commits, to every process that
// listens on the network's channel (the writer's own server and any serve-only indexer).
import type { Queryable } from "@agent-market/service";

export interface ExecutionChange {
  id: string;
  payer: string;
  agent: string;
  /** The execution is gone: its events were on a dropped fork. */
  removed: boolean;
}

export interface ChangeNotice {
  /** [id, payer, agent, removed] */
  executions?: [string, string, string, boolean][];
  agents?: string[];
  finalizedSlot?: number;
}

/** PostgreSQL refuses a payload of 8,000 bytes or more; a larger notice goes as several. */
const MAX_PAYLOAD_BYTES = 7_000;

export function channelOf(schema: string): string {
  return `${schema}_changes`;
}

/** Collects the changes of one database transaction. */
export class ChangeSet {
  private readonly executions = new Map<string, ExecutionChange>();
  private readonly agents = new Set<string>();

  execution(change: ExecutionChange): void {
    this.executions.set(change.id, change);
    this.agents.add(change.agent);
  }

  agent(address: string): void {
    this.agents.add(address);
  }

  get empty(): boolean {
    return this.executions.size === 0 && this.agents.size === 0;
  }

  /** Queues the notices on `db`'s transaction: delivered at its commit, never if it rolls back. */
  async notify(db: Queryable, schema: string): Promise<void> {
    if (this.empty) return;
    const notices: ChangeNotice[] = [];
    let current: Required<Pick<ChangeNotice, "executions" | "agents">> = { executions: [], agents: [] };
    let size = 0;
    const room = (bytes: number) => {
      if (size + bytes > MAX_PAYLOAD_BYTES && size > 0) {
        notices.push(current);
        current = { executions: [], agents: [] };
        size = 0;
      }
      size += bytes;
    };
    for (const change of this.executions.values()) {
      const item: [string, string, string, boolean] = [change.id, change.payer, change.agent, change.removed];
      room(JSON.stringify(item).length + 1);
      current.executions.push(item);
    }
    for (const agent of this.agents) {
      room(agent.length + 3);
      current.agents.push(agent);
    }
    notices.push(current);
    await db.query(`SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS p(payload)`, [channelOf(schema), notices.map((notice) => JSON.stringify(notice))]);
  }
}
