import { Empty } from "./Status.js";

/** An empty filtered result: what was asked for, and a button that asks for everything again. */
export function NoMatch({ text, clear, onClear }: { text: string; clear: string; onClear: () => void }) {
  return (
    <Empty>
      <p data-testid="no-match">{text}</p>
      <button type="button" onClick={onClear}>
        {clear}
      </button>
    </Empty>
  );
}
