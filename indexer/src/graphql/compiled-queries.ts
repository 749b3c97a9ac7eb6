// Queries compiled once into functions that complete their fields (graphql-jit), for the
// documents clients send again and again (the dashboard's, the SDK's): answers computed for one
// subject cost a quarter to a half less CPU than graphql-js walking the selection on every
// request (docs/performance.md). Compiling costs more than running a document once, so a
// document is compiled only on its second run: a client sending a new document each time (within
// the limits, which run first) costs what it did without compilation, never a compile per
// request. Documents are the parser cache's (one object per distinct query text), so what is
// compiled is bounded by that cache and dropped with it. Subscriptions keep graphql-js: their
// source streams and limits hook into its subscribe.
import { useGraphQlJit } from "@envelop/graphql-jit";
import { getOperationAST, type DocumentNode } from "graphql";

/** Runs of a document before it is compiled. */
const RUNS_BEFORE_COMPILING = 1;

/** Whether a run of `document` takes its compiled form: a query's, from its second run on. */
export function compileOnRepeat(): (run: { document: DocumentNode; operationName?: string | null }) => boolean {
  const runs = new WeakMap<DocumentNode, number>();
  return ({ document, operationName }) => {
    if (getOperationAST(document, operationName)?.operation !== "query") return false;
    const seen = runs.get(document) ?? 0;
    if (seen >= RUNS_BEFORE_COMPILING) return true;
    runs.set(document, seen + 1);
    return false;
  };
}

export function compiledQueriesPlugin(): ReturnType<typeof useGraphQlJit> {
  return useGraphQlJit({}, { enableIf: compileOnRepeat() });
}
