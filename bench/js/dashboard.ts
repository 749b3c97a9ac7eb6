// Benchmark of the dashboard (app/) in Debian's chromium against a local relayer, indexer and chain:
//   1. the first load's JavaScript, gzipped (what index.html loads before anything is clicked);
//   2. time until the keys screen is usable (fresh browser profile → page → local test wallet
//      sign-in → keys listed), median of runs; baseline: the same page until the sign-in screen;
//   3. the keys screen with --keys keys (1,000): time to list and render them all, and the
//      latency of a revocation (click → row updated) and of typing in the form with them shown;
//   4. the usage screen of a wallet with --executions executions (100,000) indexed, seeded in the
//      indexer's database over the last 30 days: time from the Usage link to the screen usable
//      (totals and charts drawn), and from choosing 24h, 7d or 30d to its figures drawn; baseline:
//      the same, in the same run, for a wallet with no history.
//
//   npm run dashboard --workspace @agent-market/bench -- [--runs 5] [--keys 1000] [--executions 100000]
//     [--only keys,usage]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

import { chromium, type Browser, type Page } from "playwright-core";

import { DIST, startStack, type Stack } from "@agent-market/app/test/stack";
import { seedExecutions } from "./seed-executions.js";

const arg = (name: string, fallback: string) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1]! : fallback;
};
const RUNS = Number(arg("runs", "5"));
const KEYS = Number(arg("keys", "1000"));
const EXECUTIONS = Number(arg("executions", "100000"));
const ONLY = arg("only", "keys,usage").split(",");
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function firstLoadJs(): { files: string[]; raw: number; gzipped: number } {
  const html = readFileSync(join(DIST, "index.html"), "utf8");
  const files = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  let raw = 0;
  let gzipped = 0;
  for (const file of files) {
    const bytes = readFileSync(join(DIST, file));
    raw += bytes.length;
    gzipped += gzipSync(bytes, { level: 9 }).length;
  }
  return { files, raw, gzipped };
}

async function timeToKeys(browser: Browser, url: string): Promise<{ signInMs: number; keysMs: number; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const start = performance.now();
  await page.goto(url);
  await page.getByRole("button", { name: "Use the local test wallet" }).waitFor();
  const signInMs = performance.now() - start;
  await page.getByRole("button", { name: "Use the local test wallet" }).click();
  await page.getByRole("button", { name: "Generate key" }).waitFor();
  await page.locator("[data-testid=keys-table], .empty").first().waitFor();
  return { signInMs, keysMs: performance.now() - start, page };
}

async function main() {
  const js = firstLoadJs();
  console.log(`first load JavaScript: ${js.files.length} files, ${js.raw} bytes, ${js.gzipped} bytes gzipped`);

  const stack = await startStack();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", headless: true, args: ARGS });
  try {
    if (ONLY.includes("keys")) await keysFigures(browser, stack);
    if (ONLY.includes("usage")) await usageFigures(browser, stack);
  } finally {
    await browser.close();
    await stack.close();
  }
}

async function keysFigures(browser: Browser, stack: Stack) {
  const signIn: number[] = [];
  const keys: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const { signInMs, keysMs, page } = await timeToKeys(browser, stack.relayer.url);
    signIn.push(signInMs);
    keys.push(keysMs);
    await page.context().close();
  }
  const signInMedian = median(signIn);
  const keysMedian = median(keys);
  console.log(`page → sign-in screen (baseline): median ${signInMedian.toFixed(0)} ms over ${RUNS} runs`);
  console.log(`page → local wallet sign-in → keys screen usable: median ${keysMedian.toFixed(0)} ms (${(keysMedian / signInMedian).toFixed(2)}× the baseline)`);

  // One wallet with KEYS keys, made through the relayer's API with the page's own session.
  const { page } = await timeToKeys(browser, stack.relayer.url);
  const token = await page.evaluate(() => JSON.parse(localStorage.getItem("agent-market.session")!).token as string);
  for (let made = 0; made < KEYS; made += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, KEYS - made) }, (_, i) =>
        fetch(`${stack.relayer.url}/v1/keys`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ name: `key ${made + i}`, environment: "test" }),
        }).then((r) => {
          if (r.status !== 201) throw new Error(`key creation answered ${r.status}`);
        }),
      ),
    );
  }
  const listStart = performance.now();
  // The session survives the reload: no sign-in again.
  await page.reload();
  await page.waitForFunction((n) => document.querySelectorAll("[data-testid=key-row]").length >= n, KEYS, { timeout: 120_000 });
  console.log(`keys screen with ${KEYS} keys: listed and rendered in ${(performance.now() - listStart).toFixed(0)} ms`);

  const typing: number[] = [];
  for (let i = 0; i < 20; i++) {
    typing.push(
      await page.evaluate(async () => {
        const input = document.querySelector<HTMLInputElement>("input[placeholder='production server']")!;
        input.focus();
        const t0 = performance.now();
        document.execCommand("insertText", false, "x");
        await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
        return performance.now() - t0;
      }),
    );
  }
  console.log(`typing a character with ${KEYS} keys shown: median ${median(typing).toFixed(1)} ms to the next frame`);

  // Timed in the page: the confirmation click → the row showing "revoked", and the DELETE's own
  // share of it from the browser's resource timing.
  const revokes: { total: number; request: number; sent: number; answered: number }[] = [];
  for (let i = 0; i < 5; i++) {
    revokes.push(
      await page.evaluate(async (index) => {
        const row = document.querySelectorAll<HTMLElement>("[data-testid=key-row]")[index * 7 + 1]!;
        row.querySelector<HTMLButtonElement>("button")!.click();
        await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
        performance.clearResourceTimings();
        const t0 = performance.now();
        row.querySelector<HTMLButtonElement>("button.danger")!.click();
        while (!row.querySelector(".badge-revoked")) await new Promise((resolve) => requestAnimationFrame(resolve));
        const total = performance.now() - t0;
        const request = (performance.getEntriesByType("resource") as PerformanceResourceTiming[]).find((e) => e.name.includes("/v1/keys/"));
        return { total, request: request?.duration ?? Number.NaN, sent: (request?.startTime ?? Number.NaN) - t0, answered: (request?.responseEnd ?? Number.NaN) - t0 };
      }, i),
    );
  }
  const total = median(revokes.map((r) => r.total));
  const request = median(revokes.map((r) => r.request));
  console.log(`revoking a key with ${KEYS} keys shown: median ${total.toFixed(0)} ms from click to updated row, of which ${request.toFixed(0)} ms the relayer's DELETE (${(total / request).toFixed(2)}×); sent after ${median(revokes.map((r) => r.sent)).toFixed(0)} ms, answered after ${median(revokes.map((r) => r.answered)).toFixed(0)} ms`);
  await page.context().close();
}

const RANGE_BUCKETS = { "24h": 25, "7d": 8, "30d": 31 } as const;

/**
 * Resolves once the usage screen shows `range`'s figures: its totals (a range switch keeps the
 * previous range's on screen, marked as such, until the new ones arrive), and the charts with
 * that range's buckets, or the empty notice for a wallet with no history.
 */
async function usageShown(page: Page, range: keyof typeof RANGE_BUCKETS, history: boolean): Promise<void> {
  await page.waitForFunction(
    ({ range, buckets, history }) => {
      if (!document.querySelector(`[data-testid=usage-totals][data-range="${range}"]`)) return false;
      if (!history) return document.querySelector("main .empty") !== null;
      return document.querySelectorAll("[data-testid=chart-executions] rect").length === buckets;
    },
    { range, buckets: RANGE_BUCKETS[range], history },
    { polling: "raf", timeout: 60_000 },
  ).catch(async (error: unknown) => {
    const seen = await page.evaluate(() => ({
      range: document.querySelector("[data-testid=usage-totals]")?.getAttribute("data-range"),
      bars: document.querySelectorAll("[data-testid=chart-executions] rect").length,
      text: document.querySelector("main")?.textContent?.slice(0, 300),
    }));
    throw new Error(`the usage screen never showed ${range} (${JSON.stringify(seen)}): ${String(error)}`);
  });
}

/** Opens the usage screen and switches ranges, `RUNS` times; milliseconds per step. */
async function usageTimes(page: Page, history: boolean): Promise<{ open: number[]; switches: Record<"7d" | "30d" | "24h", number[]> }> {
  const open: number[] = [];
  const switches = { "7d": [] as number[], "30d": [] as number[], "24h": [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    const t0 = performance.now();
    await page.getByRole("link", { name: "Usage" }).click();
    await usageShown(page, "24h", history);
    open.push(performance.now() - t0);
    for (const range of ["7d", "30d", "24h"] as const) {
      const t1 = performance.now();
      await page.getByRole("radio", { name: range }).check();
      await usageShown(page, range, history);
      switches[range].push(performance.now() - t1);
    }
  }
  return { open, switches };
}

async function signedInPage(browser: Browser, stack: Stack): Promise<{ page: Page; wallet: string }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(stack.relayer.url);
  await page.getByRole("button", { name: "Use the local test wallet" }).click();
  await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
  const wallet = await page.evaluate(() => JSON.parse(localStorage.getItem("agent-market.session")!).wallet as string);
  return { page, wallet };
}

async function usageFigures(browser: Browser, stack: Stack) {
  const empty = await signedInPage(browser, stack);
  const seeded = await signedInPage(browser, stack);
  const seedStarted = performance.now();
  await seedExecutions(stack.indexer, { executions: EXECUTIONS, payer: seeded.wallet, spacing: "even", finalize: false });
  console.log(`usage: ${EXECUTIONS} executions seeded for one wallet over 30 days in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s`);
  // One unmeasured pass each, so that both start with the page's code and the indexer's plans warm.
  await usageShown((await empty.page.getByRole("link", { name: "Usage" }).click(), empty.page), "24h", false);
  await usageShown((await seeded.page.getByRole("link", { name: "Usage" }).click(), seeded.page), "24h", true);
  const shown = await seeded.page.getByTestId("total-executions").textContent();
  const baseline = await usageTimes(empty.page, false);
  const loaded = await usageTimes(seeded.page, true);
  const [baselineOpen, loadedOpen] = [median(baseline.open), median(loaded.open)];
  console.log(`usage screen (24 h totals shown: ${shown} executions for the seeded wallet), medians over ${RUNS} runs:`);
  console.log("| step | no history (baseline) | " + `${EXECUTIONS} executions | ratio |`);
  console.log("| --- | --- | --- | --- |");
  console.log(`| Usage link → screen usable (24 h) | ${baselineOpen.toFixed(0)} ms | ${loadedOpen.toFixed(0)} ms | ${(loadedOpen / baselineOpen).toFixed(2)} |`);
  for (const range of ["7d", "30d", "24h"] as const) {
    const [b, l] = [median(baseline.switches[range]), median(loaded.switches[range])];
    console.log(`| switch to ${range} → figures drawn | ${b.toFixed(0)} ms | ${l.toFixed(0)} ms | ${(l / b).toFixed(2)} |`);
  }
  await empty.page.context().close();
  await seeded.page.context().close();
}

await main();
