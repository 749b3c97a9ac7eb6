// The life of a dashboard test file: the marketplace stack and a browser before its tests; after
// each test, no console error on any page it opened; at the end, what the file asked to be closed
// (newest first), then the pages, the browser and the stack.
import { strict as assert } from "node:assert";
import { mkdirSync } from "node:fs";

import type { Keypair } from "@solana/web3.js";
import type { Browser } from "playwright-core";

import { launchBrowser, openDashboard, type DashboardPage, type RunningBrowser } from "./browser.js";
import { SHOTS } from "./page-checks.js";
import { startStack, type Stack } from "./stack.js";

export interface DashboardSuite {
  readonly stack: Stack;
  readonly browser: Browser;
  /** Every page opened through `open`, checked after each test. */
  readonly opened: DashboardPage[];
  /** A page of the stack's relayer, or of `baseUrl`, with `wallet` injected (none: null). */
  open(wallet: Keypair | null, width?: number, baseUrl?: string): Promise<DashboardPage>;
  /** Runs `close` at the end, before the stack closes. */
  defer(close: () => Promise<unknown>): void;
}

export function dashboardSuite(
  options: {
    /** The relayer's dashboard settings (startStack's argument). */
    dashboard?: Parameters<typeof startStack>[0];
    /** The local chain's settings (a slower slot, say). */
    chain?: Parameters<typeof startStack>[1];
    /** Console errors a test expects, which are then not failures. */
    expectedError?: (error: string) => boolean;
  } = {},
): DashboardSuite {
  let stack: Stack | undefined;
  let chrome: RunningBrowser | undefined;
  const opened: DashboardPage[] = [];
  const deferred: (() => Promise<unknown>)[] = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    stack = await startStack(options.dashboard, options.chain);
    chrome = await launchBrowser();
  });

  afterEach(function () {
    for (const dashboard of opened) {
      const errors = dashboard.errors.filter((error) => !(options.expectedError?.(error) ?? false));
      assert.deepEqual(errors, [], `console errors in "${this.currentTest?.title}"`);
    }
  });

  after(async () => {
    for (const close of deferred.reverse()) await close();
    await Promise.all(opened.map((d) => d.context.close()));
    await chrome?.close();
    await stack?.close();
  });

  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the suite's before hook has not run");
    return value;
  };
  return {
    get stack() {
      return ready(stack);
    },
    get browser() {
      return ready(chrome).browser;
    },
    opened,
    async open(wallet, width = 1280, baseUrl) {
      const dashboard = await openDashboard(ready(chrome).browser, baseUrl ?? ready(stack).relayer.url, wallet, width);
      opened.push(dashboard);
      return dashboard;
    },
    defer(close) {
      deferred.push(close);
    },
  };
}
