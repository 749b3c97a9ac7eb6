// The chain's raw texts as they reach the page (web3.js errors, JSON-RPC errors, the browser's
// fetch failures), each said in the dashboard's words with what to do, never as the raw text.
import { strict as assert } from "node:assert";

import { InvalidRequestError, PaymentRequiredError } from "@agent-market/client";

import { ChainError, isRawRpcText } from "../src/data/chain-errors.js";
import { explain } from "../src/data/errors.js";
import { graphql } from "../src/data/graphql.js";

/** What web3.js's SendTransactionError says when preflight simulation fails: the program's logs included. */
const SIMULATION_WITH_LOGS = `Simulation failed. 
Message: Transaction simulation failed: Error processing Instruction 0: custom program error: 0x4. 
Logs: 
[
  "Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA invoke [1]",
  "Program log: Instruction: Approve",
  "Program log: Error: owner does not match",
  "Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA consumed 2914 of 200000 compute units",
  "Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA failed: custom program error: 0x4"
]. 
Catch the \`SendTransactionError\` and call \`getLogs()\` on it for full details.`;

const REACHED = "Check your connection (on your own machine: that npm start is still running), then try again.";

const CASES: { raw: string; title: string; detail: string; fix: string; wallet: boolean }[] = [
  {
    raw: SIMULATION_WITH_LOGS,
    title: "The chain refused",
    detail: "The chain refused the transaction: it did not take effect.",
    fix: "Try again in a moment.",
    wallet: false,
  },
  {
    raw: "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1\nProgram log: Error: insufficient funds",
    title: "Not enough USDC",
    detail: "The wallet's USDC account holds less than this transaction moves: it did not take effect.",
    fix: "Add USDC to the wallet on the Wallet screen, or move less, then try again.",
    wallet: true,
  },
  {
    raw: "Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.",
    title: "The wallet needs SOL for the network fee",
    detail: "The wallet has no SOL to pay the transaction's network fee.",
    fix: "Add SOL to the wallet for the network fee on the Wallet screen, then try again.",
    wallet: true,
  },
  ...["Transaction simulation failed: Blockhash not found", "Signature 5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW has expired: block height exceeded."].map(
    (raw) => ({
      raw,
      title: "The transaction expired",
      detail: "The transaction expired before the chain accepted it; nothing was taken.",
      fix: "Try again: a new transaction is prepared each time.",
      wallet: false,
    }),
  ),
  ...[
    "Transaction was not confirmed in 30.00 seconds. It is unknown if it succeeded or failed. Check signature 5VER using the Solana Explorer or CLI tools.",
    "the transaction was not confirmed within 20 s",
  ].map((raw) => ({
    raw,
    title: "Not confirmed in time",
    detail: "The chain did not confirm the transaction in time: it may still go through.",
    fix: "Look again in a moment (Refresh) before trying it again, so that nothing is done twice.",
    wallet: false,
  })),
  {
    raw: "failed to get recent blockhash: Node is behind by 42 slots",
    title: "The chain's RPC node is catching up",
    detail: "The chain's RPC node has not caught up with the chain; nothing was sent.",
    fix: "Try again in a moment.",
    wallet: false,
  },
  ...[
    "Failed to fetch",
    "failed to get info about account 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin: TypeError: Failed to fetch",
    "failed to get recent blockhash: TypeError: fetch failed",
    "NetworkError when attempting to fetch resource.",
    "HTTP 502",
    "failed to get balance of account X: Error: 503 Service Unavailable: <html><body>upstream</body></html>",
    "failed to send transaction: Error: 429 Too Many Requests: rate limited",
  ].map((raw) => ({
    raw,
    title: "The chain could not be reached",
    detail: "The chain's RPC did not answer: it may be stopped or busy, or this computer is offline. Nothing was sent.",
    fix: REACHED,
    wallet: false,
  })),
];

describe("the chain's raw texts in the dashboard's words", () => {
  for (const { raw, title, detail, fix, wallet } of CASES) {
    it(`${title}: ${raw.split("\n")[0]!.slice(0, 70)}`, () => {
      for (const error of [new ChainError(raw), new Error(raw)]) {
        // web3.js's errors reach the page as plain Errors: any raw text among them is recognised.
        if (!(error instanceof ChainError) && !isRawRpcText(raw)) continue;
        const explained = explain(error);
        assert.deepEqual(
          { title: explained.title, detail: explained.detail, fix: explained.fix, link: explained.link?.href ?? null },
          { title, detail, fix, link: wallet ? "#/wallet" : null },
          raw,
        );
        const shown = `${explained.title} ${explained.detail} ${explained.fix}`;
        assert.doesNotMatch(shown, /simulation|custom program error|0x[0-9a-f]|Program log|blockhash|prior credit|Failed to fetch|HTTP \d|Service Unavailable|Too Many Requests|Node is behind/i);
      }
    });
  }

  it("recognises every raw text above when it arrives as a plain Error, except the fetch failures and HTTP statuses only rpc.ts meets (it wraps them)", () => {
    const unrecognised = CASES.map((c) => c.raw).filter((raw) => !isRawRpcText(raw));
    assert.deepEqual(unrecognised, ["Failed to fetch", "NetworkError when attempting to fetch resource.", "HTTP 502"]);
  });

  it("says an unreachable indexer in words, not the browser's fetch failure", async () => {
    // Port 1 on the loopback: nothing listens, the connection is refused at once.
    const failed = await graphql("http://127.0.0.1:1/graphql", "query { indexerStatus { network } }").then(
      () => assert.fail("answered"),
      (error: unknown) => error,
    );
    assert.deepEqual(explain(failed), {
      title: "The indexer could not be reached",
      detail: "The indexer, where these figures come from, did not answer: it may be stopped or restarting, or this computer is offline.",
      fix: "Try again in a moment.",
      code: null,
      requestId: null,
      link: null,
    });
  });

  it("says a 402's amounts in USDC without zeros beyond the cents, keeping the digits a small price needs", () => {
    const refused = new PaymentRequiredError({
      status: 402,
      code: "insufficient_allowance",
      type: "payment_required",
      message: "allowance too low",
      details: { required_usdc: "0.002500", allowance_usdc: "0.000000" },
    });
    assert.equal(
      explain(refused).fix,
      "The call costs 0.0025 USDC but the wallet lets the marketplace move only 0.00 USDC. Raise the allowance on the Wallet screen, then run it again.",
    );
  });

  it("points a short balance to the faucet on localnet, and to the Wallet screen elsewhere", () => {
    const short = new PaymentRequiredError({
      status: 402,
      code: "insufficient_balance",
      type: "payment_required",
      message: "balance too low",
      details: { required_usdc: "0.250000", balance_usdc: "0.100000" },
    });
    const local = explain(short, true);
    assert.equal(local.fix, "The call costs 0.25 USDC and the wallet holds 0.10 USDC. Fund the wallet with test USDC on the Wallet screen (one click on this local marketplace), then run it again.");
    assert.deepEqual(local.link, { href: "#/wallet", label: "Fund it on the Wallet screen" });
    assert.equal(explain(short).fix, "The call costs 0.25 USDC and the wallet holds 0.10 USDC. Add USDC to the wallet on the Wallet screen, then run it again.");
  });

  it("says a collateral below the minimum in amounts, with where to top it up", () => {
    const refused = new InvalidRequestError({
      status: 422,
      code: "collateral_below_minimum",
      type: "invalid_request_error",
      message: "The agent locks 99.500000 USDC; the minimum is 100.000000 USDC.",
      details: { collateral_usdc: "99.500000", minimum_collateral_usdc: "100.000000" },
    });
    const e = explain(refused);
    assert.equal(e.title, "The agent's collateral is below the market's minimum");
    assert.match(e.detail, /^It locks 99\.50 USDC; the market's minimum is 100\.00 USDC\./);
    assert.deepEqual(e.link, { href: "#/my-agents", label: "Open My agents" });
  });

  it("leaves the dashboard's own words alone", () => {
    const own = new Error("The program refused: The collateral is below the market's minimum (CollateralBelowMinimum).");
    assert.equal(isRawRpcText(own.message), false);
    assert.deepEqual(explain(own), { title: "Something went wrong", detail: own.message, fix: null, code: null, requestId: null, link: null });
  });
});
