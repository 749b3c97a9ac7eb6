// The public keys of the development keypairs committed in localnet/dev-config.json. Their
// secret halves are public, so a mainnet deployment must never sign with them; the list is kept
// here (the relayer may run without the repository) and checked against that file by a test.
const COMMITTED: Readonly<Record<string, string>> = {
  "89TkJ4bxAPQvpw5T8iXiryiGPc6zRa52zkUyYEx78nQE": "authority",
  CuzeM3uzQabj3FZtuhNBLupj7mdtVu9HbWJRFUzMoRLM: "relayer",
  "31M24BaXfXXMXzf3YQsXtzh4yvNhCMtKWhotG9YU4dDn": "arbiter",
  "92x2XuR3bbmCU3eLqRMupn9xmhqdSxkerYuQTrymxcRz": "mintAuthority",
  FuHPmgyqaDKdoJC7vDFHJeLq9havg4kM8tKfYpmnwFxb: "usdcMint",
  "598bpNEiTiB3ShPeAm4scb8LXU54as8MvL1hwx3Ax2sx": "faucet",
};

/** The name of the committed development keypair whose public key is `address`, or undefined. */
export function committedDevelopmentKey(address: string): string | undefined {
  return Object.hasOwn(COMMITTED, address) ? COMMITTED[address] : undefined;
}

export const COMMITTED_DEVELOPMENT_KEYS: readonly string[] = Object.keys(COMMITTED);
