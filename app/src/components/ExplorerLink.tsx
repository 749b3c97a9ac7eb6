import { useApp } from "../app-context.js";

/** A transaction on Solana's explorer; on localnet, through its custom-cluster setting. */
export function ExplorerLink({ signature }: { signature: string }) {
  const { config, network } = useApp();
  const cluster =
    config.localnet && config.localnet_rpc_url !== null
      ? `cluster=custom&customUrl=${encodeURIComponent(config.localnet_rpc_url)}`
      : network === "devnet"
        ? "cluster=devnet"
        : "";
  const href = `https://explorer.solana.com/tx/${signature}${cluster ? `?${cluster}` : ""}`;
  return (
    <a href={href} target="_blank" rel="noreferrer noopener" className="mono nowrap" title={signature}>
      {signature.slice(0, 8)}…{signature.slice(-4)}
      <span className="visually-hidden"> (opens the explorer)</span>
    </a>
  );
}
