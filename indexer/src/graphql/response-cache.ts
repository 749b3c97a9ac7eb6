// Answers to queries, kept until the next change the writer commits. A dashboard asks the same
// few queries again and again (every visitor of an agent's page asks that page's query), and
// between two commits their answers cannot differ, except through the clock: the windows end now.
// So an answer is served again only while
//   - the change feed is listening and no notice arrived since it was computed (any commit, and
//     any move of the finalized watermark, is a notice): never staler than the change feed;
//   - it is younger than `ttlMs`, which bounds what the clock alone changes (a window's edge);
//   - it carried no error.
// Requests for the same query and variables that arrive while it is being computed wait for that
// one answer instead of computing it again. Subscriptions are never cached.
import { LruMap } from "@agent-market/program";
import { Kind, type DocumentNode, type ExecutionResult, type OperationDefinitionNode } from "graphql";
import type { Plugin } from "graphql-yoga";

import type { ChangeFeed } from "../change-feed.js";

export interface ResponseCacheOptions {
  /** Answers kept at most (least recently used dropped first). */
  maxEntries: number;
  /** Age past which an answer is computed again even without a change. */
  ttlMs: number;
  now?: () => number;
}

interface Entry {
  generation: number;
  computedAt: number;
  answer: Promise<ExecutionResult>;
}

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
  // graphql-yoga parses each distinct document once and hands out the same object: key on it.
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;
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
      const generation = feed.generation();
      const cached = entries.get(key);
      if (cached && cached.generation === generation && now() - cached.computedAt < options.ttlMs) {
        let timer: NodeJS.Timeout | undefined;
        const answer = await Promise.race([cached.answer, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), WAIT_MS)))]);
        clearTimeout(timer);
        if (answer !== null) {
          setResultAndStopExecution(answer);
          return;
        }
      }
      let settle!: (result: ExecutionResult) => void;
      const answer = new Promise<ExecutionResult>((resolve) => (settle = resolve));
      const entry: Entry = { generation, computedAt: now(), answer };
      entries.set(key, entry);
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in Object(result)) {
            entries.delete(key);
            return;
          }
          const single = result as ExecutionResult;
          settle(single);
          // An error is not kept: the next request tries again.
          if (single.errors?.length && entries.get(key) === entry) entries.delete(key);
        },
      };
    },
  };
}
