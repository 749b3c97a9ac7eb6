// Debian's chromium driven by playwright-core, and a Wallet Standard wallet injected into the
// page, backed by a test keypair whose signatures are made here in Node.
import { Keypair, Transaction } from "@solana/web3.js";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

import { ed25519Sign } from "@agent-market/tests/fixtures";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface RunningBrowser {
  browser: Browser;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<RunningBrowser> {
  // playwright-core gives every launch a fresh, temporary --user-data-dir of its own (and refuses
  // the flag from the caller), so no state survives between runs.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}

/** Registers "Test Wallet" with the Wallet Standard registry before the app's scripts run. */
function injectedWallet({ address, publicKey }: { address: string; publicKey: number[] }) {
  const w = window as unknown as {
    __walletSign(bytes: number[]): Promise<number[]>;
    __walletSignTransaction(bytes: number[]): Promise<number[]>;
  };
  const chains = ["solana:devnet", "solana:localnet"];
  const features = ["solana:signMessage", "solana:signTransaction"];
  const account = { address, publicKey: new Uint8Array(publicKey), chains, features };
  const wallet = {
    version: "1.0.0",
    name: "Test Wallet",
    icon: "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxIDEiLz4=",
    chains,
    accounts: [account],
    features: {
      "standard:connect": { version: "1.0.0", connect: async () => ({ accounts: [account] }) },
      "standard:events": { version: "1.0.0", on: () => () => {} },
      "solana:signMessage": {
        version: "1.0.0",
        signMessage: async (...inputs: { message: Uint8Array }[]) =>
          Promise.all(inputs.map(async (i) => ({ signedMessage: i.message, signature: new Uint8Array(await w.__walletSign(Array.from(i.message))) }))),
      },
      "solana:signTransaction": {
        version: "1.0.0",
        supportedTransactionVersions: ["legacy"],
        signTransaction: async (...inputs: { transaction: Uint8Array }[]) =>
          Promise.all(inputs.map(async (i) => ({ signedTransaction: new Uint8Array(await w.__walletSignTransaction(Array.from(i.transaction))) }))),
      },
    },
  };
  const callback = ({ register }: { register(wallet: unknown): void }) => register(wallet);
  window.addEventListener("wallet-standard:app-ready", (event) => callback((event as CustomEvent).detail));
  window.dispatchEvent(new CustomEvent("wallet-standard:register-wallet", { detail: callback }));
}

export interface DashboardPage {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions seen so far. */
  errors: string[];
}

export async function openDashboard(browser: Browser, baseUrl: string, wallet: Keypair | null, width = 1280): Promise<DashboardPage> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, baseURL: baseUrl });
  return openTab(context, wallet);
}

/** Another tab of the same browser profile (its localStorage shared), with `wallet` injected. */
export async function openTab(context: BrowserContext, wallet: Keypair | null): Promise<DashboardPage> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  if (wallet !== null) {
    await page.exposeFunction("__walletSign", (bytes: number[]) => Array.from(ed25519Sign(wallet, Uint8Array.from(bytes))));
    await page.exposeFunction("__walletSignTransaction", (bytes: number[]) => {
      const tx = Transaction.from(Uint8Array.from(bytes));
      tx.partialSign(wallet);
      return Array.from(tx.serialize({ requireAllSignatures: false }));
    });
    // tsx compiles this file keeping function names through a `__name` helper the page lacks.
    await page.addInitScript({ content: "globalThis.__name = (f) => f;" });
    await page.addInitScript(injectedWallet, { address: wallet.publicKey.toBase58(), publicKey: Array.from(wallet.publicKey.toBytes()) });
  }
  await page.goto("/");
  return { context, page, errors };
}

/** Signs in with the injected wallet and waits for the keys screen. */
export async function signInWithTestWallet(dashboard: DashboardPage): Promise<void> {
  await dashboard.page.getByRole("button", { name: "Test Wallet", exact: true }).click();
  await dashboard.page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
}
