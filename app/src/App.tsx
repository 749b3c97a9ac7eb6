import type { WalletSession } from "@agent-market/client";
import { lazy, Suspense, useEffect, useRef, useState } from "react";

import { AppContext, type AppState } from "./app-context.js";
import { ErrorNotice } from "./components/ErrorNotice.js";
import { Loading } from "./components/Status.js";
import { loadConfig, type DashboardConfig } from "./data/config.js";
import { resumeSession, signOut, storedSession, watchSession } from "./data/session.js";
import { AgentPage } from "./screens/AgentPage.js";
import { ExecutionsScreen } from "./screens/Executions.js";
import { KeysScreen } from "./screens/Keys.js";
import { MarketplaceScreen } from "./screens/Marketplace.js";
import { SignInScreen } from "./screens/SignIn.js";
import { UsageScreen } from "./screens/Usage.js";
import { WalletScreen } from "./screens/Wallet.js";
import { WebhooksScreen } from "./screens/Webhooks.js";
import { DEV_ARBITER_WALLET } from "./wallet/local-wallet.js";
import { reconnect } from "./wallet/reconnect.js";
import type { ConnectedWallet } from "./wallet/wallet.js";

// The creators' and the arbiter's screens build program transactions in the page: their code
// (the program's client and web3.js) loads when one is opened, not with the first screen.
const MyAgentsScreen = lazy(() => import("./screens/MyAgents.js").then((m) => ({ default: m.MyAgentsScreen })));
const ListAgentScreen = lazy(() => import("./screens/ListAgent.js").then((m) => ({ default: m.ListAgentScreen })));
const DisputesScreen = lazy(() => import("./screens/Disputes.js").then((m) => ({ default: m.DisputesScreen })));
const ArbiterScreen = lazy(() => import("./screens/Arbiter.js").then((m) => ({ default: m.ArbiterScreen })));

// The navigation by role: what a consumer uses, what a creator uses, and the arbiter's screen,
// shown only to the market's arbiter (anyone else reaching it by address is told who can rule).
const GROUPS: readonly { label: string; screens: readonly (readonly [string, string])[] }[] = [
  {
    label: "Use agents",
    screens: [
      ["keys", "API keys"],
      ["usage", "Usage"],
      ["executions", "Executions"],
      ["webhooks", "Webhooks"],
      ["wallet", "Wallet"],
      ["disputes", "Disputes"],
      ["marketplace", "Marketplace"],
    ],
  },
  {
    label: "Sell agents",
    screens: [
      ["my-agents", "My agents"],
      ["list-agent", "List an agent"],
    ],
  },
  { label: "Arbitrate", screens: [["arbiter", "Arbiter"]] },
];
const SCREENS = GROUPS.flatMap((group) => group.screens);

function useRoute(): [string, (route: string) => void] {
  const read = () => location.hash.replace(/^#\/?/, "") || "keys";
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onHash = () => setRoute(read());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  return [route, (next) => (location.hash = `#/${next}`)];
}

function Screen({ route, go }: { route: string; go: (route: string) => void }) {
  if (route.startsWith("agents/")) return <AgentPage agentId={decodeURIComponent(route.slice(7))} onBack={() => go("marketplace")} />;
  switch (route) {
    case "usage":
      return <UsageScreen />;
    case "executions":
      return <ExecutionsScreen />;
    case "wallet":
      return <WalletScreen />;
    case "webhooks":
      return <WebhooksScreen />;
    case "my-agents":
      return <MyAgentsScreen />;
    case "list-agent":
      return <ListAgentScreen />;
    case "disputes":
      return <DisputesScreen />;
    case "arbiter":
      return <ArbiterScreen />;
    case "marketplace":
      return <MarketplaceScreen onOpen={(id) => go(`agents/${encodeURIComponent(id)}`)} />;
    default:
      return <KeysScreen />;
  }
}

export function App() {
  const [config, setConfig] = useState<DashboardConfig | null>(null);
  const [configError, setConfigError] = useState<unknown>(null);
  const [signedIn, setSignedIn] = useState<{ wallet: ConnectedWallet; session: WalletSession } | null>(null);
  const [resuming, setResuming] = useState(() => storedSession() !== null);
  const [route, go] = useRoute();
  useEffect(() => {
    loadConfig().then(setConfig, setConfigError);
  }, []);
  // A reload or a new tab: the stored session, with its wallet connected again, while both hold.
  useEffect(() => {
    if (config === null || !resuming) return;
    const stored = storedSession();
    if (stored === null) return setResuming(false);
    void (async () => {
      const wallet = await reconnect(stored, config).catch(() => null);
      const session = wallet !== null && wallet.address === stored.wallet ? await resumeSession(wallet.address) : null;
      if (wallet !== null && session !== null) setSignedIn({ wallet, session });
      setResuming(false);
    })();
  }, [config, resuming]);
  // Another tab signing in stores its session: this one resumes it as after a reload.
  useEffect(() => watchSession({ onSignedIn: () => setResuming(true), onSignedOut: () => setSignedIn(null) }), []);
  // The sign-in button that had focus is gone: start the keyboard at the top of the page, so the
  // first Tab reaches the skip link and then the navigation.
  const top = useRef<HTMLSpanElement>(null);
  const signedInNow = signedIn !== null;
  useEffect(() => {
    if (signedInNow) top.current?.focus();
  }, [signedInNow]);
  useEffect(() => {
    const current = SCREENS.find(([id]) => id === route)?.[1] ?? (route.startsWith("agents/") ? "Agent" : "API keys");
    document.title = signedIn ? `${current} · Agent Market` : "Sign in · Agent Market";
    // On a phone the links scroll sideways in one row: keep the current one in sight.
    document.querySelector('.top nav a[aria-current="page"]')?.scrollIntoView({ block: "nearest", inline: "nearest" });
  }, [route, signedIn]);

  if (configError !== null)
    return (
      <main id="main">
        <ErrorNotice error={configError} />
      </main>
    );
  if (config === null || resuming)
    return (
      <main id="main">
        <Loading what={resuming ? "your session" : "the dashboard"} />
      </main>
    );
  if (signedIn === null) return <SignInScreen config={config} onSignedIn={(wallet, session) => setSignedIn({ wallet, session })} />;

  const state: AppState = { config, ...signedIn, network: config.networks.includes("devnet") ? "devnet" : "mainnet" };
  const isArbiter = config.arbiters[state.network] === signedIn.wallet.address;
  return (
    <AppContext.Provider value={state}>
      <span ref={top} tabIndex={-1} />
      <a href="#main" className="skip" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Agent Market</span>
        <nav aria-label="Dashboard">
          <ul className="nav-groups">
            {GROUPS.filter((group) => group.label !== "Arbitrate" || isArbiter).map((group) => (
              <li key={group.label} className="nav-group">
                <span className="visually-hidden" id={`nav-${group.label.toLowerCase().replace(/ /g, "-")}`}>
                  {group.label}
                </span>
                <ul aria-labelledby={`nav-${group.label.toLowerCase().replace(/ /g, "-")}`}>
                  {group.screens.map(([id, label]) => (
                    <li key={id}>
                      <a href={`#/${id}`} aria-current={route === id || (id === "marketplace" && route.startsWith("agents/")) ? "page" : undefined}>
                        {label}
                      </a>
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </nav>
        <span className="who">
          {signedIn.wallet.local && <span className="badge badge-local">{signedIn.wallet.name === DEV_ARBITER_WALLET ? "development arbiter" : "local test wallet"}</span>}
          <span className="mono" title={signedIn.wallet.address}>
            {signedIn.wallet.address.slice(0, 4)}…{signedIn.wallet.address.slice(-4)}
          </span>
          <button
            type="button"
            onClick={() => {
              void signOut(signedIn.session).then(() => signedIn.wallet.disconnect());
              setSignedIn(null);
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<Loading what="the screen" />}>
          <Screen route={route} go={go} />
        </Suspense>
      </main>
    </AppContext.Provider>
  );
}
