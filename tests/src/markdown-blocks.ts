// The fenced code blocks of a Markdown file, found by the heading they follow, so tests run the
// examples exactly as the documentation shows them.
import { readFileSync } from "node:fs";

/**
 * The `index`-th fenced block of language `language` in the section under `heading` (the text of
 * a heading line, without its #s), up to the next heading of the same or a higher level.
 */
export function codeBlock(file: string, heading: string, language: string, index = 0): string {
  const lines = readFileSync(file, "utf8").split("\n");
  const start = lines.findIndex((line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, "") === heading);
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const blocks: string[] = [];
  let current: string[] | undefined;
  let fenceLanguage = "";
  for (const line of lines.slice(start + 1)) {
    if (current === undefined) {
      const heading = /^(#{1,6}) /.exec(line);
      if (heading && heading[1]!.length <= level) break;
      const fence = /^```(\S*)\s*$/.exec(line);
      if (fence) {
        current = [];
        fenceLanguage = fence[1]!;
      }
    } else if (/^```\s*$/.test(line)) {
      if (fenceLanguage === language) blocks.push(current.join("\n") + "\n");
      current = undefined;
    } else {
      current.push(line);
    }
  }
  const block = blocks[index];
  if (block === undefined) throw new Error(`${file}, "${heading}": no ${language} block number ${index + 1}`);
  return block;
}

/** `text` with each [from, to] replaced once; a `from` missing from the text is an error. */
export function substitute(text: string, replacements: [string, string][]): string {
  return replacements.reduce((result, [from, to]) => {
    if (!result.includes(from)) throw new Error(`the example no longer contains ${JSON.stringify(from)}`);
    return result.replace(from, () => to);
  }, text);
}
