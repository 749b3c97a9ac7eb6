// `agent-market admin accept`: accept_market_authority, the second step of a handover that
// `agent-market admin update --new-authority` proposed. Signed by the proposed key.
import { acceptMarketAuthorityInstruction } from "@agent-market/program";
import { PublicKey } from "@solana/web3.js";

import { CliError, type Io } from "../io.js";
import { parse } from "../options.js";
import { ADMIN_OPTIONS, adminContext, existingMarket } from "./admin-context.js";
import { carryOut } from "./admin-plan.js";

export const ACCEPT_USAGE = `agent-market admin accept --keypair <proposed authority file> --rpc <url>

Makes the signer the market authority, if the current one proposed it with agent-market admin
update --new-authority (NotProposedAuthority otherwise).`;

export async function adminAccept(args: string[], io: Io): Promise<void> {
  const { values } = parse(args, ADMIN_OPTIONS, ACCEPT_USAGE);
  const ctx = await adminContext(io, values, ACCEPT_USAGE);
  const market = await existingMarket(ctx);
  if (!ctx.signer.publicKey.equals(market.pendingAuthority)) {
    throw new CliError(
      `${ctx.keypairPath} is ${ctx.signer.publicKey.toBase58()}, not the proposed authority ${
        market.pendingAuthority.equals(PublicKey.default) ? "(none is proposed)" : market.pendingAuthority.toBase58()
      }`,
      "the market authority proposes a key with agent-market admin update --new-authority <address>",
    );
  }
  await carryOut(ctx, {
    action: "accept",
    instructions: [acceptMarketAuthorityInstruction({ programId: ctx.programId, newAuthority: ctx.signer.publicKey })],
    changes: [
      { field: "authority", before: market.authority.toBase58(), after: ctx.signer.publicKey.toBase58() },
      { field: "pending_authority", before: market.pendingAuthority.toBase58(), after: null },
    ],
  });
}
