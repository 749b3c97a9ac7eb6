// Query limits, checked before anything runs: depth, aliases, and a cost where a
// connection or list multiplies its selection by the page it asks for. A refusal carries its code.
import { Kind, type ASTVisitor, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type GraphQLError, type OperationDefinitionNode, type SelectionSetNode, type ValidationContext } from "graphql";

import { graphqlError } from "./errors.js";

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
}

export const DEFAULT_LIMITS: QueryLimits = { maxDepth: 10, maxAliases: 15, maxCost: 5_000 };

/** Arguments whose value multiplies the cost of the field's selection, and their defaults. */
const MULTIPLIERS: Record<string, number> = { first: 20, days: 90 };

interface Walk {
  depth: number;
  aliases: number;
  cost: number;
}

function multiplier(field: FieldNode, variables: Record<string, unknown>): number {
  for (const argument of field.arguments ?? []) {
    const fallback = MULTIPLIERS[argument.name.value];
    if (fallback === undefined) continue;
    const value = argument.value;
    if (value.kind === Kind.INT) return Math.max(1, Number(value.value));
    if (value.kind === Kind.VARIABLE) {
      const bound = variables[value.name.value];
      return typeof bound === "number" ? Math.max(1, bound) : fallback;
    }
    return fallback;
  }
  // A connection without `first` gets the default page.
  if (field.selectionSet?.selections.some((selection) => selection.kind === Kind.FIELD && ["edges", "nodes"].includes(selection.name.value))) return MULTIPLIERS.first!;
  return 1;
}

function walk(
  set: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  depth: number,
  seen: Set<string>,
  totals: Walk,
): number {
  let cost = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      // `__typename` costs nothing to resolve, but 500 aliases of it are still 500 answers.
      if (selection.alias) totals.aliases += 1;
      if (selection.name.value.startsWith("__")) continue;
      totals.depth = Math.max(totals.depth, depth);
      const inner = selection.selectionSet ? walk(selection.selectionSet, fragments, variables, depth + 1, seen, totals) : 0;
      cost += 1 + multiplier(selection, variables) * inner;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      cost += walk(selection.selectionSet, fragments, variables, depth, seen, totals);
    } else {
      const name = selection.name.value;
      const fragment = fragments[name];
      // A fragment cycle is refused by graphql's own rules; do not follow one here.
      if (!fragment || seen.has(name)) continue;
      seen.add(name);
      cost += walk(fragment.selectionSet, fragments, variables, depth, seen, totals);
      seen.delete(name);
    }
  }
  return cost;
}

/**
 * The first limit the operation breaks, or null. Run before execution, with the request's
 * variables, so that `first: $n` is costed at the n it asks for.
 */
export function checkQueryLimits(document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>, limits: QueryLimits): GraphQLError | null {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  const operations: OperationDefinitionNode[] = [];
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
    if (definition.kind === Kind.OPERATION_DEFINITION && (!operationName || definition.name?.value === operationName)) operations.push(definition);
  }
  for (const operation of operations) {
    const totals: Walk = { depth: 0, aliases: 0, cost: 0 };
    totals.cost = walk(operation.selectionSet, fragments, variables, 1, new Set(), totals);
    if (totals.depth > limits.maxDepth) return graphqlError("QUERY_TOO_DEEP", `the query is ${totals.depth} levels deep; at most ${limits.maxDepth}`, { depth: totals.depth });
    if (totals.aliases > limits.maxAliases) return graphqlError("TOO_MANY_ALIASES", `the query has ${totals.aliases} aliases; at most ${limits.maxAliases}`, { aliases: totals.aliases });
    if (totals.cost > limits.maxCost) return graphqlError("QUERY_TOO_COSTLY", `the query costs ${totals.cost}; at most ${limits.maxCost}`, { cost: totals.cost, maxCost: limits.maxCost });
  }
  return null;
}

/** Production: no introspection (the schema is documented in docs/indexer.md, not served). */
export function noIntrospectionRule(context: ValidationContext): ASTVisitor {
  return {
    Field(field) {
      if (field.name.value === "__schema" || field.name.value === "__type") {
        context.reportError(graphqlError("INTROSPECTION_DISABLED", "introspection is disabled in production"));
      }
    },
  };
}
