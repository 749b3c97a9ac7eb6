// The regular-expression engine of creators' schemas (`pattern`, `patternProperties`): RE2,
// whose matching time is linear in the input, so no pattern can stall the event loop the way a
// backtracking one (`^(a|a)*$` against "aaaa…!") does in JavaScript's engine. RE2 has no
// backreferences or lookaround: such a pattern fails to compile, and the listing is refused.
//
// re2-wasm is the WebAssembly build (the native `re2` needs a compiler at install time). Its
// matchers live in WebAssembly memory that JavaScript's collector does not see: each is freed
// when the object wrapping it is collected.
import { RE2 } from "re2-wasm";

interface WasmMatcher {
  delete(): void;
}

const matchers = new FinalizationRegistry<WasmMatcher>((matcher) => matcher.delete());

/** Ajv's `code.regExp`: Ajv always passes the "u" flag, which RE2 requires. */
export function linearRegExp(pattern: string, flags: string): RE2 {
  const regexp = new RE2(pattern, flags);
  matchers.register(regexp, (regexp as unknown as { wrapper: WasmMatcher }).wrapper);
  return regexp;
}
// For Ajv's standalone code generation, which the relayer does not use; Ajv's type asks for it.
linearRegExp.code = 'require("re2-wasm").RE2';
