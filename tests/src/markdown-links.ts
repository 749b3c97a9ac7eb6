// Relative links of Markdown files, and whether each names a file that exists and, with a
// #fragment, a heading of that file, with anchors made as GitHub makes them.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, relative, resolve } from "node:path";

export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** The text with fenced code blocks blanked (line numbers kept), where links and headings are not. */
function withoutCodeBlocks(text: string): string[] {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker[0]!.repeat(marker.length);
      return "";
    }
    if (fence !== undefined) {
      if (marker !== undefined && marker.startsWith(fence)) fence = undefined;
      return "";
    }
    return line;
  });
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor of a Markdown text; a repeated heading gets -1, -2, … as on GitHub. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCodeBlocks(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = headingAnchor(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The `[text](target)` links of one line, outside inline code. */
function linksOf(line: string): string[] {
  const prose = line.replace(/`[^`]*`/g, "");
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** The files of the repository that `file` (absolute) links to, as absolute paths. */
export function linkedFiles(file: string, text = readFileSync(file, "utf8")): string[] {
  return withoutCodeBlocks(text)
    .flatMap(linksOf)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => target.split("#", 1)[0]!)
    .filter((path) => path !== "")
    .map((path) => resolve(dirname(file), decodeURIComponent(path)));
}

/** Links of `file` (absolute) to files of the repository that do not resolve. */
export function brokenLinks(file: string, root: string, text = readFileSync(file, "utf8")): BrokenLink[] {
  const broken: BrokenLink[] = [];
  withoutCodeBlocks(text).forEach((line, index) => {
    for (const target of linksOf(line)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: … are not files
      const report = (reason: string) => broken.push({ file: relative(root, file), line: index + 1, target, reason });
      const [path, fragment] = target.split("#", 2) as [string, string | undefined];
      const resolved = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!resolved.startsWith(root)) {
        report("points outside the repository");
        continue;
      }
      if (path !== "" && !existsSync(resolved)) {
        report("no such file");
        continue;
      }
      if (fragment === undefined) continue;
      if (path !== "" && (statSync(resolved).isDirectory() || extname(resolved) !== ".md")) {
        report("a #fragment of something that is not a Markdown file");
        continue;
      }
      const anchors = resolved === file ? anchorsOf(text) : anchorsOf(readFileSync(resolved, "utf8"));
      if (!anchors.has(fragment)) report(`no heading with the anchor #${fragment}`);
    }
  });
  return broken;
}
