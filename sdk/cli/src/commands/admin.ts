// `agent-market admin`: the market authority's actions, one file each. Every action that signs
// shows what it signs first, refuses mainnet without --confirm-mainnet, simulates instead of
// sending with --dry-run, and prints the transaction signature (or one JSON object with --json).
import { UsageError, type Command, type Io } from "../io.js";
import { ACCEPT_USAGE, adminAccept } from "./admin-accept.js";
import { ADMIN_OPTIONS_USAGE } from "./admin-context.js";
import { adminInit, INIT_USAGE } from "./admin-init.js";
import { adminPause, PAUSE_USAGE } from "./admin-pause.js";
import { adminRotate, ROTATE_USAGE } from "./admin-rotate.js";
import { adminShards, SHARDS_USAGE } from "./admin-shards.js";
import { adminShow, SHOW_USAGE } from "./admin-show.js";
import { adminSweep, SWEEP_USAGE } from "./admin-sweep.js";
import { adminUpdate, UPDATE_USAGE } from "./admin-update.js";

const ACTIONS: Record<string, (args: string[], io: Io) => Promise<void>> = {
  show: adminShow,
  init: adminInit,
  shards: adminShards,
  update: adminUpdate,
  accept: adminAccept,
  rotate: adminRotate,
  pause: (args, io) => adminPause(args, io, true),
  unpause: (args, io) => adminPause(args, io, false),
  sweep: adminSweep,
};

const usage = `agent-market admin <action> --keypair <file> --rpc <url> [options]

The market authority's actions on the agent_market program (docs/deploy.md):

  show      the market as it is on chain
  init      initialize_market: create the market with its parameters
  shards    create_fee_shard for every fee shard not created yet
  update    update_market: amounts, windows, treasury; proposes a new authority
  accept    accept_market_authority: the proposed authority takes the market
  rotate    update_market: a new relayer or arbiter key
  pause     update_market: stop new escrows and subscriptions
  unpause   update_market: let them open again
  sweep     sweep_fees: move the fee shards' balances to the treasury

${ADMIN_OPTIONS_USAGE}

${[INIT_USAGE, SHARDS_USAGE, UPDATE_USAGE, ACCEPT_USAGE, ROTATE_USAGE, PAUSE_USAGE, SWEEP_USAGE, SHOW_USAGE].join("\n\n")}`;

export const admin: Command = {
  name: "admin",
  summary: "the market authority's actions: init, shards, update, accept, rotate, pause, sweep",
  usage,
  async run(args, io) {
    const [action, ...rest] = args;
    const run = action === undefined ? undefined : ACTIONS[action];
    if (!run) throw new UsageError(action === undefined ? "admin needs an action" : `unknown admin action ${action}`, usage);
    await run(rest, io);
  },
};
