import { randomBytes } from "node:crypto";

import { agentPda, formatSigningKeyProof, signSigningKeyProof } from "@agent-market/program";
import { utils } from "@coral-xyz/anchor";
import { PublicKey } from "@solana/web3.js";

import { output, UsageError, type Command } from "../io.js";
import { readKeypair } from "../keyfile.js";
import { parse, required } from "../options.js";
import { programIdOption } from "../program-id.js";

const usage = `agent-market key-proof --signing-key <keypair file> --creator <wallet address>
                       [--agent <address> | --agent-id <base58>] [--program-id <address>] [--json]

Prints the signing-key proof: the agent's signing key's signature over SHA-256 of
"agentmarket/signing-key/v1", the agent account's address and the creator's wallet. The program
registers a signing key only with this proof (and sets a new one with update_agent only with it),
so no one can list your key and endpoint with their own payout account. Run it where the key
lives and paste the proof into the dashboard, or pass it to register --key-proof.

--agent names the agent account; --agent-id derives it from an agent id (base58 of 16 bytes)
with --program-id (else $AGENT_MARKET_PROGRAM_ID, else the IDL's). With neither, a new random
agent id is chosen and printed with its address: register the agent with that id.`;

function address(text: string, option: string): PublicKey {
  try {
    return new PublicKey(text);
  } catch {
    throw new UsageError(`${option} ${text} is not an address`, usage);
  }
}

function agentIdOption(text: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = utils.bytes.bs58.decode(text);
  } catch {
    throw new UsageError(`--agent-id ${text} is not base58`, usage);
  }
  if (bytes.length !== 16) throw new UsageError(`--agent-id ${text} is not 16 bytes`, usage);
  return bytes;
}

export const keyProof: Command = {
  name: "key-proof",
  summary: "print the signing-key proof an agent's registration needs",
  usage,
  async run(args, io) {
    const { values } = parse(
      args,
      {
        "signing-key": { type: "string" },
        creator: { type: "string" },
        agent: { type: "string" },
        "agent-id": { type: "string" },
        "program-id": { type: "string" },
      },
      usage,
    );
    const signing = await readKeypair(required(values["signing-key"], "--signing-key", usage));
    const creator = address(required(values.creator, "--creator", usage), "--creator");
    if (values.agent !== undefined && values["agent-id"] !== undefined) {
      throw new UsageError("give --agent or --agent-id, not both", usage);
    }
    const programId = programIdOption(io, values["program-id"], usage);
    let agentId: Uint8Array | undefined;
    let agent: PublicKey;
    if (values.agent !== undefined) {
      agent = address(values.agent, "--agent");
    } else {
      agentId = values["agent-id"] === undefined ? new Uint8Array(randomBytes(16)) : agentIdOption(values["agent-id"]);
      agent = agentPda(agentId, programId);
    }
    const proof = formatSigningKeyProof(signSigningKeyProof(signing.secretKey, agent, creator));
    const result = {
      ...(agentId ? { agent_id: utils.bytes.bs58.encode(agentId) } : {}),
      agent: agent.toBase58(),
      creator: creator.toBase58(),
      signing_key: signing.publicKey.toBase58(),
      key_proof: proof,
    };
    output(io, result, () =>
      values.agent !== undefined ? [proof] : [`agent_id  ${result.agent_id}`, `agent     ${result.agent}`, `key_proof ${proof}`],
    );
  },
};
