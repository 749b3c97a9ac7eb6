import type { ReactNode } from "react";

/** One checklist line: to do (null), done, or not yet, in symbols and in words for screen readers. */
export function Check({ ok, children, testId }: { ok: boolean | null; children: ReactNode; testId?: string }) {
  return (
    <li className={ok === null ? "" : ok ? "ok" : "bad"} data-testid={testId}>
      <span aria-hidden="true">{ok === null ? "○" : ok ? "✓" : "✗"}</span> <span className="visually-hidden">{ok === null ? "to do:" : ok ? "done:" : "not yet:"}</span> {children}
    </li>
  );
}
