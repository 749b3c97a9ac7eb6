// The program's decoders (anchor, web3.js) expect Node's Buffer as a global; only the receipt
// verifier, loaded on demand, needs them.
import { Buffer } from "buffer";

(globalThis as { Buffer?: unknown }).Buffer ??= Buffer;
