// What one answer was read from. The response cache keeps an answer across the writer's commits
// that do not touch what it read: the notice of a commit names the executions, payers, agents,
// API keys and creators it changed (ingest/change-notice.ts), and every read of a resolver names
// the subject it reads (`GraphQLContext.reading`). A read that no notice names precisely (a list
// across subjects, the market's totals, the checkpoint) makes the answer depend on every change.
//
// The finalized flags of an answer depend on the watermark only through `slot <= watermark` for
// the slots it compared, so the answer holds while the watermark stays between the highest slot it
// called final and the lowest it did not: a move of the watermark past neither leaves it as it is.
import type { ChangeNotice } from "../ingest/change-notice.js";
import type { Dimension } from "../ingest/buckets.js";

/** The subjects a notice can name, as `${kind}:${value}`. */
export type SubjectKind = "execution" | "agent" | "payer" | "api_key" | "creator";

export function subjectKey(kind: SubjectKind, value: string): string {
  return `${kind}:${value}`;
}

/** What a request's finalized flags are judged by: the watermark, each comparison remembered. */
export interface Finality {
  isFinal(slot: number): boolean;
}

export class AnswerScope {
  private readonly subjects = new Set<string>();
  private dependsOnEverything = false;
  private live = false;
  /** The highest slot called final, and the lowest called not final. */
  private finalThrough = Number.NEGATIVE_INFINITY;
  private unfinalFrom = Number.POSITIVE_INFINITY;

  /** A subject read; a rollup dimension's subject is named as itself, but no notice names a shard or the market. */
  read(kind: SubjectKind | Dimension, value: string): void {
    if (kind === "shard" || kind === "market") this.dependsOnEverything = true;
    else this.subjects.add(subjectKey(kind, value));
  }

  readEverything(): void {
    this.dependsOnEverything = true;
  }

  /** Read what changes without a notice (the checkpoint's slots): the answer is not kept. */
  readLive(): void {
    this.live = true;
  }

  get keepable(): boolean {
    return !this.live;
  }

  /** `slot <= watermark`, remembered. */
  judge(slot: number, watermark: number): boolean {
    if (slot <= watermark) {
      this.finalThrough = Math.max(this.finalThrough, slot);
      return true;
    }
    this.unfinalFrom = Math.min(this.unfinalFrom, slot);
    return false;
  }

  /** Whether every finalized flag of the answer reads the same at `watermark`. */
  holdsAt(watermark: number): boolean {
    return this.finalThrough <= watermark && watermark < this.unfinalFrom;
  }

  /** Whether a commit that changed `changed` (null: anything) may change the answer. */
  touchedBy(changed: ReadonlySet<string> | null): boolean {
    if (changed === null || this.dependsOnEverything) return true;
    if (this.subjects.size <= changed.size) {
      for (const subject of this.subjects) if (changed.has(subject)) return true;
      return false;
    }
    for (const subject of changed) if (this.subjects.has(subject)) return true;
    return false;
  }
}

/**
 * The subjects a notice says changed; null when it cannot say (a notice from a writer that does
 * not name API keys and creators yet). A notice that only moves the watermark changes none.
 */
export function changedSubjects(notice: ChangeNotice): Set<string> | null {
  const changed = new Set<string>();
  for (const item of notice.executions ?? []) {
    if (item.length < 6) return null;
    const [id, payer, agent, , apiKeyId, creator] = item;
    changed.add(subjectKey("execution", id));
    changed.add(subjectKey("payer", payer));
    changed.add(subjectKey("agent", agent));
    if (apiKeyId) changed.add(subjectKey("api_key", apiKeyId));
    if (creator) changed.add(subjectKey("creator", creator));
  }
  for (const agent of notice.agents ?? []) changed.add(subjectKey("agent", agent));
  for (const creator of notice.creators ?? []) changed.add(subjectKey("creator", creator));
  return changed;
}
