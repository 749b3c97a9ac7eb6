// The amount a list shows for an execution: what a settled call was charged (a metered call less
// than its escrow held), and what any other holds or held.
export function executionAmountUsdc(execution: { state: string; amount: { usdc: string }; charged?: { usdc: string } | null }): string {
  return execution.state === "SETTLED" && execution.charged ? execution.charged.usdc : execution.amount.usdc;
}
