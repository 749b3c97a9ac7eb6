// The receipt log trees rebuilt from the stored leaves, for proofs against each tree's current
// root. A tree holds up to 2^18 leaves, so rebuilding it per request is out of the question:
// each tree read is kept (every level, one contiguous buffer per level) and brought up to date
// by appending the leaves stored since, which rehashes only the nodes above them.
//
// Cost: a tree of n leaves first read costs one indexed read of n leaf hashes and n − 1 node
// hashes (2^18 leaves: 262,143 hashes at ≈ 6–12 µs each with node:crypto, ≈ 3 s measured once per
// tree and server on the loaded 2-core development machine) and holds 2 × 32 × n bytes (16 MB
// for a full tree); each later proof reads only the leaves stored since, k of them, and hashes
// at most k + 2 × 18 nodes, then reads its 18 siblings from memory. At most MAX_CACHED_LEAVES
// leaves are held across trees, the least recently used trees going first.
//
// The rebuilt root must equal the root the chain recorded after the tree's newest batch (the
// newest leaf's `log_root`): the root commits to every leaf, so a match proves the cached leaves
// are the chain's, and a mismatch (a dropped transaction, a leaf not stored yet) rebuilds once
// from the table, then refuses to answer rather than hand out a proof the chain would refuse.
import { prepared, type Pool } from "@agent-market/service";
import { EMPTY_SUBTREES, nodeHash, RECEIPT_TREE_DEPTH, TREE_LEAVES } from "../ingest/receipt-leaf.js";

const HASH_BYTES = 32;
export const MAX_CACHED_LEAVES = 4 * TREE_LEAVES;

/** One tree's leaves and every level above them, each padded on the right with empty subtrees. */
export class Tree {
  /** levels[l] holds ceil(count / 2^l) nodes. */
  private readonly levels: Buffer[] = Array.from({ length: RECEIPT_TREE_DEPTH + 1 }, () => Buffer.alloc(0));
  count = 0;

  private sizeAt(level: number): number {
    return Math.ceil(this.count / 2 ** level);
  }

  private nodeAt(level: number, index: number): Buffer {
    if (index >= this.sizeAt(level)) return EMPTY_SUBTREES[level]!;
    return this.levels[level]!.subarray(index * HASH_BYTES, (index + 1) * HASH_BYTES);
  }

  /** Room for `nodes` nodes at `level`, keeping what is there (capacity doubles). */
  private reserve(level: number, nodes: number): void {
    const buffer = this.levels[level]!;
    if (buffer.length >= nodes * HASH_BYTES) return;
    const grown = Buffer.alloc(Math.max(nodes, Math.min(2 * buffer.length / HASH_BYTES, 2 ** (RECEIPT_TREE_DEPTH - level))) * HASH_BYTES);
    buffer.copy(grown);
    this.levels[level] = grown;
  }

  /** Appends `leaves` and rehashes the nodes above them, the changed range halving per level. */
  append(leaves: readonly Buffer[]): void {
    if (leaves.length === 0) return;
    const first = this.count;
    this.count += leaves.length;
    this.reserve(0, this.count);
    leaves.forEach((leaf, i) => leaf.copy(this.levels[0]!, (first + i) * HASH_BYTES));
    let from = first;
    for (let level = 1; level <= RECEIPT_TREE_DEPTH; level++) {
      // The node that held the old right edge changes too: its right child was empty before.
      from >>= 1;
      const to = this.sizeAt(level);
      this.reserve(level, to);
      for (let index = from; index < to; index++) {
        nodeHash(this.nodeAt(level - 1, 2 * index), this.nodeAt(level - 1, 2 * index + 1)).copy(this.levels[level]!, index * HASH_BYTES);
      }
    }
  }

  leaf(index: number): Buffer {
    return this.nodeAt(0, index);
  }

  root(): Buffer {
    return this.nodeAt(RECEIPT_TREE_DEPTH, 0);
  }

  /**
   * Node `index` of `level` in the tree as it stood with its first `count` leaves: stored where
   * its leaves all came before `count`, empty where none did, rehashed from its children where
   * `count` cuts through it (one node a level).
   */
  private nodeWhen(level: number, index: number, count: number): Buffer {
    const first = index * 2 ** level;
    if (first >= count) return EMPTY_SUBTREES[level]!;
    if (first + 2 ** level <= count) return this.nodeAt(level, index);
    return nodeHash(this.nodeWhen(level - 1, 2 * index, count), this.nodeWhen(level - 1, 2 * index + 1, count));
  }

  /** The root of the tree as it stood with its first `count` leaves. */
  rootWhen(count: number): Buffer {
    return this.nodeWhen(RECEIPT_TREE_DEPTH, 0, count);
  }

  /** The siblings of leaf `index`, bottom up, in the tree of its first `count` leaves: what open_dispute takes. */
  proof(index: number, count = this.count): Buffer[] {
    return Array.from({ length: RECEIPT_TREE_DEPTH }, (_, level) => this.nodeWhen(level, (index >> level) ^ 1, count));
  }
}

export interface ReceiptProofResult {
  root: Buffer;
  /** Leaves of the tree under `root`. */
  leaves: number;
  proof: Buffer[];
}

interface LeafRow {
  leaf_index: string;
  leaf_hash: string;
  log_root: string;
}

export class ReceiptTrees {
  /** Key `${agent}:${tree}`; a Map iterates in insertion order, so re-inserting on use keeps LRU order. */
  private readonly trees = new Map<string, Tree>();
  /** One update at a time per tree: concurrent requests wait for it rather than repeat it. */
  private readonly pending = new Map<string, Promise<Tree>>();

  constructor(
    private readonly pool: Pool,
    private readonly schema: string,
    private readonly maxCachedLeaves = MAX_CACHED_LEAVES,
  ) {}

  /**
   * The proof of leaf `leafIndex` of `agent`'s log, or an Error saying why the stored leaves
   * cannot give one. It leads to the root after the newest checkpoint batch at or after the leaf,
   * which the log keeps for 64 checkpoints (at least an hour), else, for a leaf newer than every
   * checkpoint, to the tree's current root, which the log keeps for 64 batches: a proof served
   * by an indexer some batches behind a busy agent still opens a dispute.
   */
  async proof(agent: string, leafIndex: number): Promise<ReceiptProofResult> {
    const treeNumber = Math.floor(leafIndex / TREE_LEAVES);
    const key = `${agent}:${treeNumber}`;
    let update = this.pending.get(key);
    if (!update) {
      update = this.update(key, agent, treeNumber).finally(() => this.pending.delete(key));
      this.pending.set(key, update);
    }
    const tree = await update;
    const position = leafIndex % TREE_LEAVES;
    if (position >= tree.count) throw new Error(`leaf ${leafIndex} is not in the stored tree`);
    const start = treeNumber * TREE_LEAVES;
    const [checkpoint] = (
      await this.pool.query<{ leaf_index: string }>(
        prepared(
          this.pool,
          `SELECT leaf_index FROM ${this.schema}.receipt_leaves
           WHERE agent = $1 AND checkpoint AND leaf_index >= $2 AND leaf_index < $3 ORDER BY leaf_index DESC LIMIT 1`,
          [agent, leafIndex, start + tree.count],
        ),
      )
    ).rows;
    const count = checkpoint ? Number(checkpoint.leaf_index) - start + 1 : tree.count;
    return { root: tree.rootWhen(count), leaves: count, proof: tree.proof(position, count) };
  }

  private async update(key: string, agent: string, treeNumber: number): Promise<Tree> {
    const cached = this.trees.get(key);
    this.trees.delete(key);
    const tree = (cached && (await this.extend(cached, agent, treeNumber))) || (await this.extend(new Tree(), agent, treeNumber));
    if (!tree) throw new Error(`the stored leaves of tree ${treeNumber} of ${agent} do not give the root the chain recorded`);
    this.trees.set(key, tree);
    this.evict();
    return tree;
  }

  /** `tree` with the leaves stored since appended, or null if they do not follow it or miss the chain's root. */
  private async extend(tree: Tree, agent: string, treeNumber: number): Promise<Tree | null> {
    const start = treeNumber * TREE_LEAVES;
    // From the last cached leaf, which must still be stored as it was.
    const from = start + Math.max(tree.count - 1, 0);
    const rows = (
      await this.pool.query<LeafRow>(
        prepared(
          this.pool,
          `SELECT leaf_index, leaf_hash, log_root FROM ${this.schema}.receipt_leaves
           WHERE agent = $1 AND leaf_index >= $2 AND leaf_index < $3 ORDER BY leaf_index`,
          [agent, from, start + TREE_LEAVES],
        ),
      )
    ).rows;
    let fresh = rows;
    if (tree.count > 0) {
      const last = rows[0];
      if (!last || Number(last.leaf_index) !== from || last.leaf_hash !== tree.leaf(tree.count - 1).toString("hex")) return null;
      fresh = rows.slice(1);
    }
    if (rows.length === 0) return null;
    if (fresh.some((row, i) => Number(row.leaf_index) !== start + tree.count + i)) return null;
    tree.append(fresh.map((row) => Buffer.from(row.leaf_hash, "hex")));
    const newest = rows[rows.length - 1]!;
    // The leaf that fills a tree may share its batch with the next tree's first leaves, whose root
    // its log_root is then; a full tree's root is fixed by its 2^18 contiguous leaves alone.
    if (tree.count < TREE_LEAVES && tree.root().toString("hex") !== newest.log_root) return null;
    return tree;
  }

  private evict(): void {
    let held = [...this.trees.values()].reduce((sum, tree) => sum + tree.count, 0);
    for (const [key, tree] of this.trees) {
      if (held <= this.maxCachedLeaves || this.trees.size === 1) break;
      this.trees.delete(key);
      held -= tree.count;
    }
  }
}
