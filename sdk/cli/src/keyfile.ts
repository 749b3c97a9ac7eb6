// Keypair files as the Solana CLI writes them: a JSON array of the 64 bytes seed ‖ public key.
import { readFile, writeFile } from "node:fs/promises";

import { Keypair } from "@solana/web3.js";

import { CliError } from "./io.js";

export async function readKeypair(path: string): Promise<Keypair> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, "give the path of a keypair file (agent-market keygen --out <file> makes one)");
  }
  let bytes: unknown;
  try {
    bytes = JSON.parse(text);
  } catch {
    bytes = undefined;
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new CliError(`${path} is not a keypair file`, "a keypair file holds a JSON array of 64 numbers (solana-keygen or agent-market keygen)");
  }
  try {
    // Checks that the public half belongs to the seed: a mismatched file would sign as another key.
    return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
  } catch {
    throw new CliError(`${path}: its public key (the last 32 bytes) does not belong to its seed`, "generate a new one");
  }
}

/** Writes a new keypair file, 0600; refuses to replace an existing file. */
export async function writeNewKeypair(path: string, keypair: Keypair): Promise<void> {
  try {
    await writeFile(path, `${JSON.stringify(Array.from(keypair.secretKey))}\n`, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new CliError(`${path} exists; refusing to overwrite a key`, "choose another --out, or move the old file away first");
    }
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`);
  }
}

/** The keypair of --keypair, else the wallet given to login. */
export async function keypairOption(option: string | undefined, remembered: string | undefined): Promise<Keypair> {
  const path = option ?? remembered;
  if (path === undefined) throw new CliError("no keypair", "pass --keypair <file> (or login with one)");
  return readKeypair(path);
}
