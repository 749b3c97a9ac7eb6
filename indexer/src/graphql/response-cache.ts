// Answers to queries, kept until a change touches what they read. A dashboard asks the same
// queries again and again (every visitor of an agent's page asks that page's query), and an answer
// cannot differ until the writer commits a change to what it read, the watermark crosses a slot it
// judged, or the clock crosses an hour (every window and chart is whole hour or day buckets).
// So an answer is served again only while
//   - the change feed is listening, and no notice since it was computed named a subject it read
//     (answer-scope.ts; an answer that read a list or a total is dropped at every notice):
//     never staler than the change feed;
//   - the watermark leaves each of its finalized flags as it was;
//   - the hour it was computed in has not ended, and it is younger than `ttlMs`;
//   - it carried no error and read nothing that moves without a notice (the checkpoint).
// Requests for the same query and variables that arrive while it is being computed wait for that
// one answer instead of computing it again, unless a notice that arrived meanwhile touched what it
// read. Subscriptions are never cached.
import { LruMap } from "@agent-market/program";
import { Kind, type DocumentNode, type ExecutionResult, type OperationDefinitionNode } from "graphql";
import type { Plugin } from "graphql-yoga";

import type { ChangeFeed } from "../change-feed.js";
import type { ChangeNotice } from "../ingest/change-notice.js";
import { HOUR_SECS } from "../ingest/buckets.js";
import { changedSubjects, type AnswerScope } from "./answer-scope.js";
import type { GraphQLContext } from "./context.js";

export interface ResponseCacheOptions {
  /** Answers kept at most (least recently used dropped first). */
  maxEntries: number;
  /** Age past which an answer is computed again even without a change. */
  ttlMs: number;
  now?: () => number;
  /** The clock the windows end at (the server's): an answer ends with its hour. */
  nowSecs: () => number;
}

interface Entry {
  /** The feed's generation when the answer began to be computed. */
  generation: number;
  expiresAtMs: number;
  hourEndSecs: number;
  /** The answer, once computed; null if it may not be served again. */
  answer: Promise<ExecutionResult | null>;
  /** What the answer read; null while it is computed. */
  scope: AnswerScope | null;
}

/** The subjects each recent notice changed, by the generation it moved the feed to. */
interface RecentNotice {
  generation: number;
  changed: ReadonlySet<string> | null;
}

/** Notices remembered for the answers computed while they arrived; an older answer is not kept. */
const RECENT_NOTICES = 256;

function operationOf(document: DocumentNode, name: string | null | undefined): OperationDefinitionNode | undefined {
  return document.definitions.find(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION && (!name || definition.name?.value === name),
  );
}

/** How long a request waits for the same query being computed before computing it itself. */
const WAIT_MS = 5_000;

export function responseCachePlugin(feed: ChangeFeed, options: ResponseCacheOptions): Plugin {
  const now = options.now ?? Date.now;
  const entries = new LruMap<string, Entry>(options.maxEntries);
  const recent: RecentNotice[] = [];
  /** The newest generation of a notice no longer in `recent`. */
  let forgottenThrough = -1;
  // graphql-yoga parses each distinct document once and hands out the same object: key on it.
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;

  feed.onNotice((notice: ChangeNotice | null) => {
    const changed = notice === null ? null : changedSubjects(notice);
    recent.push({ generation: feed.generation(), changed });
    if (recent.length > RECENT_NOTICES) forgottenThrough = recent.shift()!.generation;
    for (const [key, entry] of entries) if (entry.scope?.touchedBy(changed)) entries.delete(key);
  });

  /** Whether a notice that arrived while `entry` was computed touched what it read. */
  const touchedWhileComputed = (entry: Entry, scope: AnswerScope): boolean => {
    if (feed.generation() === entry.generation) return false;
    if (forgottenThrough > entry.generation) return true;
    return recent.some((notice) => notice.generation > entry.generation && scope.touchedBy(notice.changed));
  };

  const fresh = (entry: Entry): boolean => {
    const watermark = feed.finalizedSlot();
    return entry.scope !== null && watermark !== null && now() < entry.expiresAtMs && options.nowSecs() < entry.hourEndSecs && entry.scope.holdsAt(watermark);
  };

  /**
   * The answer of `entry` if it may be served: a computed one if fresh; one being computed once
   * it is, if no notice that arrived meanwhile touched what it read (waiting for it is what keeps
   * a hot subject computed once however many ask, even while notices about others arrive).
   */
  const served = async (entry: Entry): Promise<ExecutionResult | null> => {
    if (entry.scope !== null) return fresh(entry) ? entry.answer : null;
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([entry.answer, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), WAIT_MS)))]);
    clearTimeout(timer);
    return answer !== null && fresh(entry) ? answer : null;
  };

  return {
    async onExecute({ args, setResultAndStopExecution }) {
      if (operationOf(args.document, args.operationName)?.operation !== "query") return;
      // Not listening: a commit could go unnoticed, so nothing is served from memory.
      if (feed.finalizedSlot() === null) return;
      let documentId = documentIds.get(args.document);
      if (documentId === undefined) {
        documentId = nextDocumentId++;
        documentIds.set(args.document, documentId);
      }
      const key = `${documentId}\u0000${args.operationName ?? ""}\u0000${JSON.stringify(args.variableValues ?? {})}`;
      const cached = entries.get(key);
      if (cached) {
        const answer = await served(cached);
        if (answer !== null) {
          setResultAndStopExecution(answer);
          return;
        }
      }
      let settle!: (result: ExecutionResult | null) => void;
      const answer = new Promise<ExecutionResult | null>((resolve) => (settle = resolve));
      const nowSecs = options.nowSecs();
      const entry: Entry = {
        generation: feed.generation(),
        expiresAtMs: now() + options.ttlMs,
        hourEndSecs: (Math.floor(nowSecs / HOUR_SECS) + 1) * HOUR_SECS,
        answer,
        scope: null,
      };
      entries.set(key, entry);
      const scope = (args.contextValue as unknown as GraphQLContext).scope;
      return {
        onExecuteDone({ result }) {
          const single = result as ExecutionResult;
          // An error is not kept: the next request tries again.
          const keep = !(Symbol.asyncIterator in Object(result)) && !single.errors?.length && scope.keepable && !touchedWhileComputed(entry, scope);
          if (keep) entry.scope = scope;
          else if (entries.get(key) === entry) entries.delete(key);
          settle(keep ? single : null);
        },
      };
    },
  };
}
