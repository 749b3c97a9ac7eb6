// The program id is configuration per network (DEVNET_PROGRAM_ID, MAINNET_PROGRAM_ID), and
// localnet can run the program at the IDL's address only: a relayer module that derives an
// address, reads an account or decodes events under the IDL's default id would pass every test
// there and fail on a cluster where the program was deployed elsewhere. So the sources are read:
// every such call from @agent-market/program names the network's id.
import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../src", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

/** The text between the parentheses of the call starting at `open` (the index of its "("). */
function argumentsAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    if ("([{".includes(text[i]!)) depth += 1;
    if (")]}".includes(text[i]!)) depth -= 1;
    if (depth === 0) return text.slice(open + 1, i);
  }
  throw new Error("unbalanced call");
}

// The helpers whose program id defaults to the IDL's when left out.
const CALLS = [
  /\b(?:agent|escrow|receipt|dispute|market|delegate|feeShard|collateralVault|escrowVault|subscription|eventAuthority)Pda\(/g,
  /\beventsFromInnerInstructions\(/g,
  /\bfetch(?:Market|Agent|Escrow|Receipt|Dispute|Subscription)\(/g,
];

describe("the network's program id in the relayer's sources", () => {
  const files = sources(SRC);

  it("imports the IDL's program id in the configuration only, as the default of <NETWORK>_PROGRAM_ID", () => {
    const users = files.filter((file) => /\bPROGRAM_ID\b/.test(readFileSync(file, "utf8").replace(/\/\/.*$/gm, "")));
    assert.deepEqual(
      users.map((file) => file.slice(SRC.length + 1)),
      ["config.ts"],
    );
  });

  it("gives every address derivation, account read and event decoding the network's program id", () => {
    const missing: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      for (const pattern of CALLS) {
        for (const match of text.matchAll(pattern)) {
          if (/^\s*(?:export\s+)?(?:async\s+)?function\b/.test(text.slice(text.lastIndexOf("\n", match.index) + 1, match.index))) continue;
          const args = argumentsAt(text, match.index + match[0].length - 1);
          if (!/programId|program_id/.test(args)) missing.push(`${file.slice(SRC.length + 1)}: ${match[0]}${args})`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });
});
