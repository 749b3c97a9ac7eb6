import { useEffect, useState } from "react";

import { agentName } from "../data/agent-names.js";
import { shortId } from "./short-id.js";

/** An agent by its listed name (its address on hover), or its short address while unlisted. */
export function AgentName({ address }: { address: string }) {
  const [name, setName] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    void agentName(address).then((n) => current && setName(n));
    return () => {
      current = false;
    };
  }, [address]);
  return (
    <span title={address} className={name === null ? "mono" : undefined} data-testid="agent-name">
      {name ?? shortId(address)}
    </span>
  );
}
