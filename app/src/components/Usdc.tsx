import { usdcText } from "./money.js";

/** An amount of USDC as people read it ("0.25 USDC"), the exact six places on hover. */
export function Usdc({ amount, testId }: { amount: string; testId?: string }) {
  return (
    <span title={`${amount} USDC`} {...(testId !== undefined ? { "data-testid": testId } : {})}>
      {usdcText(amount)}
    </span>
  );
}
