import type { GeneratedKey } from "../data/listing.js";
import { keyProofCommand } from "../data/listing.js";
import type { StarterAgent } from "../data/starter-agent.js";

export type KeyMode = "paste" | "generate" | "starter";

export interface SigningKeyState {
  mode: KeyMode;
  pasted: string;
  pastedProof: string;
  generated: GeneratedKey | null;
  downloaded: boolean;
  starter: StarterAgent | null;
}

export const NEW_SIGNING_KEY: SigningKeyState = { mode: "paste", pasted: "", pastedProof: "", generated: null, downloaded: false, starter: null };

/** The public key the form lists, whichever way it was given ("" while none is). */
export function listedKey(state: SigningKeyState): string {
  switch (state.mode) {
    case "paste":
      return state.pasted;
    case "generate":
      return state.generated?.publicKey ?? "";
    case "starter":
      return state.starter?.signing_key ?? "";
  }
}

/**
 * The signing key fieldset: a pasted key with its proof, a key generated in this page (its secret
 * downloaded once), or, on the local marketplace, the starter service's key for this agent.
 */
export function SigningKeyFields(props: {
  state: SigningKeyState;
  onChange: (state: SigningKeyState) => void;
  planned: string;
  wallet: string;
  /** Set when the local marketplace offers its starter service. */
  onUseStarter: (() => void) | null;
  starterBusy: boolean;
  onGenerate: () => void;
}) {
  const { state, onChange, planned, wallet, onUseStarter, starterBusy } = props;
  const set = (change: Partial<SigningKeyState>) => onChange({ ...state, ...change });
  return (
    <fieldset>
      <legend>Signing key (Ed25519)</legend>
      <div className="segmented">
        {onUseStarter !== null && (
          <label>
            <input type="radio" name="key-mode" checked={state.mode === "starter"} onChange={() => set({ mode: "starter" })} />
            The starter service's key
          </label>
        )}
        <label>
          <input type="radio" name="key-mode" checked={state.mode === "paste"} onChange={() => set({ mode: "paste" })} />
          Paste my service's public key
        </label>
        <label>
          <input type="radio" name="key-mode" checked={state.mode === "generate"} onChange={() => set({ mode: "generate" })} />
          Generate one here
        </label>
      </div>
      {state.mode === "starter" ? (
        state.starter === null ? (
          <button type="button" disabled={starterBusy || onUseStarter === null} onClick={() => onUseStarter?.()}>
            {starterBusy ? "Setting the starter service up…" : "Set the starter service up for this agent"}
          </button>
        ) : (
          <p className="small" data-testid="starter-key">
            The starter service signs this agent's results with <span className="mono wrap">{state.starter.signing_key}</span>; it keeps the
            key's secret and has proven the key for this agent and your wallet.
          </p>
        )
      ) : state.mode === "paste" ? (
        <>
          <label>
            Public key (base58)
            <input className="mono" value={state.pasted} onChange={(e) => set({ pasted: e.target.value })} />
          </label>
          <p className="small" data-testid="key-proof-instructions">
            The program registers a key only with its proof: the key's signature over this agent's address,{" "}
            <span className="mono wrap" data-testid="key-proof-agent">{planned}</span>, and your wallet, <span className="mono wrap">{wallet}</span>, so
            no one else can list your service and be paid for it. Where the key is kept, run:
          </p>
          <pre className="mono wrap small" data-testid="key-proof-command">{keyProofCommand(planned, wallet)}</pre>
          <label>
            Key proof (base58)
            <input className="mono" value={state.pastedProof} onChange={(e) => set({ pastedProof: e.target.value })} />
          </label>
        </>
      ) : state.generated === null ? (
        <button type="button" onClick={props.onGenerate}>
          Generate a signing key
        </button>
      ) : (
        <div data-testid="generated-key">
          <p className="small">
            Public key <span className="mono wrap">{state.generated.publicKey}</span>
          </p>
          {state.downloaded ? (
            <p className="small ok">Downloaded. This page forgets the secret when you leave it; start your service with that file.</p>
          ) : (
            <a
              className="button"
              href={`data:application/json;charset=utf-8,${encodeURIComponent(state.generated.keypairFile)}`}
              download="agent-signing-key.json"
              onClick={() => set({ downloaded: true })}
            >
              Download the keypair file (shown once)
            </a>
          )}
        </div>
      )}
    </fieldset>
  );
}
