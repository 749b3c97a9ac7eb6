// Checks every screen of the dashboard passes in the browser tests: axe-core's serious and
// critical violations, and no sideways scrolling on a narrow phone.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import type { Locator, Page } from "playwright-core";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export const SHOTS = process.env.DASHBOARD_SCREENSHOTS ?? "/tmp/dashboard-screenshots";

/** Screenshots the page as `name`-`width`.png, then asserts it is axe-clean and fits its width. */
export async function checkScreen(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()!.width;
  await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
  assert.deepEqual(violations, [], `${name} at ${width} px`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 0) {
    // The innermost elements past the right edge (not those a scrolling box clips, like the
    // phone's navigation): where to look, rather than only how far.
    // (No named functions inside: tsx would wrap them in a helper the page does not have.)
    const past = await page.evaluate(() =>
      [...document.querySelectorAll("body *")]
        .filter(
          (e) =>
            e.getBoundingClientRect().right > window.innerWidth &&
            ![...e.children].some((c) => c.getBoundingClientRect().right > window.innerWidth) &&
            ![...document.querySelectorAll("body *")].some((box) => box.contains(e) && box !== e && getComputedStyle(box).overflowX !== "visible"),
        )
        .slice(0, 5)
        .map((e) => `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className).split(" ").join(".")}` : ""} (${Math.round(e.getBoundingClientRect().width)} px wide)`),
    );
    assert.fail(`${name} scrolls sideways at ${width} px by ${overflow} px: ${past.join(", ")}`);
  }
}

/** checkScreen at each width (a phone's and a desktop's by default), then back to the page's own size. */
export async function checkScreenAt(page: Page, name: string, widths: readonly number[] = [390, 1280]): Promise<void> {
  const own = page.viewportSize()!;
  for (const width of widths) {
    await page.setViewportSize({ width, height: own.height });
    await checkScreen(page, name);
  }
  await page.setViewportSize(own);
}

/** How many lines an element's own text runs over (its text nodes, not its children's). */
export async function textLines(locator: Locator): Promise<number> {
  return locator.evaluate((element) => {
    const tops = new Set<number>();
    for (const node of element.childNodes) {
      if (node.nodeType !== Node.TEXT_NODE || node.textContent!.trim() === "") continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const rect of range.getClientRects()) tops.add(Math.round(rect.top / 8));
    }
    return tops.size;
  });
}
