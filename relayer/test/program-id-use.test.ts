// The program id is configuration per network (DEVNET_PROGRAM_ID, MAINNET_PROGRAM_ID), and
// localnet can run the program at the IDL's address only: a relayer module that used the IDL's
// id would pass every test there and fail on a cluster where the program was deployed elsewhere.
// @agent-market/program's helpers require the id, so the type checker catches one left out; what
// remains to check here is that no relayer source names the IDL's id itself.
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

describe("the network's program id in the relayer's sources", () => {
  it("never uses the IDL's program id: <NETWORK>_PROGRAM_ID is required", () => {
    const users = sources(SRC).filter((file) => /\bPROGRAM_ID\b/.test(readFileSync(file, "utf8").replace(/\/\/.*$/gm, "")));
    assert.deepEqual(
      users.map((file) => file.slice(SRC.length + 1)),
      [],
    );
  });
});
