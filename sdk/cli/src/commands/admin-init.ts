// `agent-market admin init`: initialize_market, once per deployment. The authority signs and pays
// the rent; the program checks the parameters (InvalidMarketParams) and that the treasury is a
// token account of the mint.
import { initializeMarketInstruction, marketPda, programDataPda, type MarketParams } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import { CliError, type Io } from "../io.js";
import { parse, required } from "../options.js";
import { ADMIN_OPTIONS, adminContext, readMarket, type AdminContext } from "./admin-context.js";
import { carryOut } from "./admin-plan.js";
import { addressOption, PARAM_OPTIONS, settingsView, withParamOptions } from "./admin-params.js";

export const INIT_USAGE = `agent-market admin init --keypair <authority file> --rpc <url> --usdc-mint <mint>
                        --treasury <token account> --relayer <address> --arbiter <address>
                        [--min-collateral <usdc>] [--min-price <usdc>] [--escrow-grace-secs <n>]
                        [--dispute-window-secs <n>] [--collateral-cooldown-secs <n>] [--paused]

Creates the market: the signer, which must be the program's upgrade authority (the key that
deployed it; NotUpgradeAuthority otherwise), becomes its authority. Defaults: --min-collateral 100,
--min-price 0.01, --escrow-grace-secs 60, --dispute-window-secs 259200 (3 days),
--collateral-cooldown-secs 604800 (7 days), escrows open (--paused opens it paused). The treasury
is a USDC token account of --usdc-mint, where swept fees go. Next: agent-market admin shards.`;

const DEFAULTS = {
  "min-collateral": "100",
  "min-price": "0.01",
  "escrow-grace-secs": "60",
  "dispute-window-secs": String(3 * 24 * 3600),
  "collateral-cooldown-secs": String(7 * 24 * 3600),
};

export async function adminInit(args: string[], io: Io): Promise<void> {
  const { values } = parse(
    args,
    {
      ...ADMIN_OPTIONS,
      ...PARAM_OPTIONS,
      "usdc-mint": { type: "string" },
      treasury: { type: "string" },
      relayer: { type: "string" },
      arbiter: { type: "string" },
      paused: { type: "boolean", default: false },
    },
    INIT_USAGE,
  );
  const usdcMint = addressOption(required(values["usdc-mint"], "--usdc-mint", INIT_USAGE), "--usdc-mint", INIT_USAGE);
  const treasury = addressOption(required(values.treasury, "--treasury", INIT_USAGE), "--treasury", INIT_USAGE);
  const relayer = addressOption(required(values.relayer, "--relayer", INIT_USAGE), "--relayer", INIT_USAGE);
  const arbiter = addressOption(required(values.arbiter, "--arbiter", INIT_USAGE), "--arbiter", INIT_USAGE);
  const base: MarketParams = {
    relayer,
    arbiter,
    minCollateralUsdc: 0n,
    minPricePerCallUsdc: 0n,
    escrowGraceSecs: 0,
    disputeWindowSecs: 0,
    collateralCooldownSecs: 0,
    escrowsPaused: values.paused === true,
  };
  const params = withParamOptions(base, { ...DEFAULTS, ...definedOnly(values) }, INIT_USAGE);
  const ctx = await adminContext(io, values, INIT_USAGE);
  const market = marketPda(ctx.programId);
  if (await readMarket(ctx)) {
    throw new CliError(
      `the market ${market.toBase58()} exists already (program ${ctx.programId.toBase58()}): initialize_market runs once`,
      "change its parameters with agent-market admin update",
    );
  }
  // A dry run shows the summary and the program's own answer (NotUpgradeAuthority) instead.
  if (!ctx.dryRun) await requireUpgradeAuthority(ctx);
  const after = settingsView({ params, treasury, authority: ctx.signer.publicKey, pendingAuthority: PublicKey.default });
  await carryOut(ctx, {
    action: "init",
    instructions: [initializeMarketInstruction({ programId: ctx.programId, authority: ctx.signer.publicKey, usdcMint, treasury, params })],
    changes: [
      { field: "market", before: null, after: market.toBase58() },
      { field: "usdc_mint", before: null, after: usdcMint.toBase58() },
      ...after.map(([field, value]) => ({ field, before: null, after: value })),
    ],
  });
}

/** The parameter options actually given, so that the defaults fill only the others. */
function definedOnly(values: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.keys(PARAM_OPTIONS).flatMap((name) => (typeof values[name] === "string" ? [[name, values[name] as string]] : [])),
  );
}

/** ProgramData: a u32 tag (3), the u64 deploy slot, then an Option<Pubkey> upgrade authority. */
const PROGRAM_DATA_TAG = 3;
const AUTHORITY_OFFSET = 12;

/** Refuses early, with both keys named, what the program would refuse as NotUpgradeAuthority. */
async function requireUpgradeAuthority(ctx: AdminContext): Promise<void> {
  const address = programDataPda(ctx.programId);
  let info;
  try {
    info = await ctx.connection.getAccountInfo(address);
  } catch (error) {
    throw new CliError(`cannot read the program's ProgramData account through ${ctx.rpcUrl}: ${(error as Error).message}`, "check --rpc");
  }
  const data = info?.data;
  if (!data || data.length < AUTHORITY_OFFSET + 1 || data.readUInt32LE(0) !== PROGRAM_DATA_TAG) {
    throw new CliError(
      `program ${ctx.programId.toBase58()} has no ProgramData account at ${address.toBase58()}: it was not deployed with the upgradeable loader`,
      "deploy it as docs/deploy.md says, or check --program-id and --rpc",
    );
  }
  const authority = data[AUTHORITY_OFFSET] === 1 ? new PublicKey(data.subarray(AUTHORITY_OFFSET + 1, AUTHORITY_OFFSET + 33)) : null;
  if (!authority?.equals(ctx.signer.publicKey)) {
    throw new CliError(
      `${ctx.keypairPath} is ${ctx.signer.publicKey.toBase58()}, not the program's upgrade authority ${authority?.toBase58() ?? "(none: the program is immutable)"}`,
      "pass the keypair that deployed the program as --keypair",
    );
  }
}
