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
  apiKeyId: string | null;
  creator: string | null;
}

/** [id, payer, agent, removed, apiKeyId, creator] */
export type ExecutionChangeItem = [string, string, string, boolean, string | null, string | null];

export interface ChangeNotice {
  /** A writer before API keys and creators were named sent the first four only. */
  executions?: (ExecutionChangeItem | [string, string, string, boolean])[];
  agents?: string[];
  /** Creators whose figures changed besides those named by `executions` (an agent's creator became unknown). */
  creators?: string[];
  finalizedSlot?: number;
  /** Unique, set by the writing process: it knows its own notices when they come back. */
  id?: string;
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
  private readonly creators = new Set<string>();

  execution(change: ExecutionChange): void {
    this.executions.set(change.id, change);
    this.agents.add(change.agent);
  }

  agent(address: string): void {
    this.agents.add(address);
  }

  /** A creator whose figures changed though no execution of the notice names it. */
  creator(address: string): void {
    this.creators.add(address);
  }

  get empty(): boolean {
    return this.executions.size === 0 && this.agents.size === 0 && this.creators.size === 0;
  }

  /**
   * Queues the notices on `db`'s transaction: delivered at its commit, never if it rolls back.
   * Returns them, for the writing process to apply at its commit without waiting for delivery.
   */
  async notify(db: Queryable, schema: string, nextId: () => string): Promise<ChangeNotice[]> {
    if (this.empty) return [];
    const notices: ChangeNotice[] = [];
    let current: { executions: ExecutionChangeItem[]; agents: string[]; creators: string[] } = { executions: [], agents: [], creators: [] };
    let size = 0;
    const room = (bytes: number) => {
      if (size + bytes > MAX_PAYLOAD_BYTES && size > 0) {
        notices.push(current);
        current = { executions: [], agents: [], creators: [] };
        size = 0;
      }
      size += bytes;
    };
    for (const change of this.executions.values()) {
      const item: ExecutionChangeItem = [change.id, change.payer, change.agent, change.removed, change.apiKeyId, change.creator];
      room(JSON.stringify(item).length + 1);
      current.executions.push(item);
    }
    for (const agent of this.agents) {
      room(agent.length + 3);
      current.agents.push(agent);
    }
    for (const creator of this.creators) {
      room(creator.length + 3);
      current.creators.push(creator);
    }
    notices.push(current);
    for (const notice of notices) notice.id = nextId();
    await db.query(`SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS p(payload)`, [channelOf(schema), notices.map((notice) => JSON.stringify(notice))]);
    return notices;
  }
}
