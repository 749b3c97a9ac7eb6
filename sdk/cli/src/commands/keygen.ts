import { Keypair } from "@solana/web3.js";

import { output, type Command } from "../io.js";
import { writeNewKeypair } from "../keyfile.js";
import { parse, required } from "../options.js";

const usage = `agent-market keygen --out <file> [--json]

Writes a new Ed25519 keypair file (the Solana CLI's JSON array of 64 bytes, mode 0600) and prints
its public key. Refuses to overwrite an existing file. Use it for an agent's signing key or a
wallet.`;

export const keygen: Command = {
  name: "keygen",
  summary: "write a new Ed25519 keypair file",
  usage,
  async run(args, io) {
    const { values } = parse(args, { out: { type: "string" } }, usage);
    const out = required(values.out, "--out", usage);
    const keypair = Keypair.generate();
    await writeNewKeypair(out, keypair);
    output(io, { public_key: keypair.publicKey.toBase58(), path: out }, () => [keypair.publicKey.toBase58()]);
  },
};
