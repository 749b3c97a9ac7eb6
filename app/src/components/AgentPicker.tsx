import type { Ref } from "react";

import type { AgentChoice } from "./agent-choices.js";

/**
 * The agents this wallet paid or registered, by name, to narrow a screen to one of them; `none`
 * is the choice of no agent in particular ("All agents"). `partial`: older executions' agents
 * were not read, which the list says at its end.
 */
export function AgentPicker({
  choices,
  partial,
  value,
  onChange,
  none,
  selectRef,
}: {
  choices: readonly AgentChoice[];
  partial: boolean;
  value: string;
  onChange: (address: string) => void;
  none: string;
  selectRef?: Ref<HTMLSelectElement>;
}) {
  return (
    <label>
      Agent
      <select ref={selectRef} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{none}</option>
        {choices.map((choice) => (
          <option key={choice.address} value={choice.address}>
            {choice.label}
          </option>
        ))}
        {partial && <option disabled>agents of older executions are not listed</option>}
      </select>
    </label>
  );
}
