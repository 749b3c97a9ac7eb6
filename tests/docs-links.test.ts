// The documentation's relative links: every one in README.md, CHANGELOG.md, docs/*.md and the
// packages' READMEs names a file of the repository that exists and, with a #fragment, a heading
// of that file. Docs move between files; a link left behind fails here, not in a reader's hands.
import { strict as assert } from "node:assert";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

import { REPO_ROOT } from "./src/localnet.js";
import { anchorsOf, brokenLinks, headingAnchor, linkedFiles } from "./src/markdown-links.js";

function documentationFiles(): string[] {
  const docs = readdirSync(join(REPO_ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(REPO_ROOT, "docs", name));
  const readmes = readdirSync(join(REPO_ROOT, "sdk"))
    .map((name) => join(REPO_ROOT, "sdk", name, "README.md"))
    .filter((path) => existsSync(path));
  return [join(REPO_ROOT, "README.md"), join(REPO_ROOT, "CHANGELOG.md"), ...docs, ...readmes];
}

describe("documentation links", () => {
  it("every relative link of README.md, CHANGELOG.md, docs/*.md and sdk/*/README.md resolves, anchors included", () => {
    const files = documentationFiles();
    assert.ok(files.length >= 10, `found ${files.length} files`);
    const broken = files.flatMap((file) => brokenLinks(file, REPO_ROOT));
    assert.deepEqual(broken, [], broken.map((b) => `${b.file}:${b.line}: ${b.target}: ${b.reason}`).join("\n"));
  });

  it("every file of docs/ can be reached from the README", () => {
    const docs = readdirSync(join(REPO_ROOT, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => join(REPO_ROOT, "docs", name));
    const reached = new Set<string>();
    const queue = [join(REPO_ROOT, "README.md")];
    while (queue.length > 0) {
      for (const target of linkedFiles(queue.shift()!)) {
        if (!target.endsWith(".md") || reached.has(target) || !existsSync(target)) continue;
        reached.add(target);
        queue.push(target);
      }
    }
    assert.deepEqual(docs.filter((doc) => !reached.has(doc)), []);
  });

  it("the checker reports a missing file, a missing heading and a link outside the repository, and skips code", () => {
    const file = join(REPO_ROOT, "docs", "example.md");
    const text = [
      "# Title",
      "## The `agent-market` command (v1)",
      "[ok](#title) [ok](#the-agent-market-command-v1) [ok](api.md#configuration) [ok](https://example.com/x.md)",
      "[missing](nothing-here.md) [heading](api.md#no-such-heading) [outside](../../etc/passwd)",
      "`[in code](nothing.md)`",
      "```md",
      "[in a block](nothing.md)",
      "```",
    ].join("\n");
    assert.deepEqual(
      brokenLinks(file, REPO_ROOT, text).map((b) => [b.line, b.target, b.reason]),
      [
        [4, "nothing-here.md", "no such file"],
        [4, "api.md#no-such-heading", "no heading with the anchor #no-such-heading"],
        [4, "../../etc/passwd", "points outside the repository"],
      ],
    );
    assert.equal(headingAnchor("The relayer's SOL"), "the-relayers-sol");
    assert.equal(headingAnchor("The execute protocol (marketplace ⇄ creator)"), "the-execute-protocol-marketplace--creator");
    assert.deepEqual([...anchorsOf("# A\n## A\n```\n# B\n```\n")], ["a", "a-1"]);
  });
});
