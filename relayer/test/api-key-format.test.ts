import { strict as assert } from "node:assert";
import { randomBytes } from "node:crypto";

import { generateApiKey, hashApiKey, parseApiKey } from "../src/auth/api-key-format.js";

describe("API key format", () => {
  it("carries its environment's prefix, 30 random base62 characters and a 6-character checksum", () => {
    for (const environment of ["test", "live"] as const) {
      const { secret, last4 } = generateApiKey(environment);
      assert.match(secret, new RegExp(`^svc_${environment}_[0-9A-Za-z]{36}$`));
      assert.equal(last4, secret.slice(-4));
      assert.equal(parseApiKey(secret), environment);
    }
  });

  it("never repeats and spreads over the whole alphabet (at least 128 bits of randomness)", () => {
    const keys = Array.from({ length: 2000 }, () => generateApiKey("test").secret);
    assert.equal(new Set(keys).size, keys.length);
    const seen = new Set(keys.flatMap((key) => [...key.slice(9, 39)]));
    assert.equal(seen.size, 62, "every base62 character appears");
    assert.ok(30 * Math.log2(62) >= 128);
  });

  it("refuses any single-character change, by the checksum alone", () => {
    const { secret } = generateApiKey("live");
    for (let i = 9; i < secret.length; i += 1) {
      const replacement = secret[i] === "a" ? "b" : "a";
      const typo = secret.slice(0, i) + replacement + secret.slice(i + 1);
      assert.equal(parseApiKey(typo), null, `position ${i}`);
    }
  });

  it("refuses other prefixes, lengths and alphabets", () => {
    const { secret } = generateApiKey("test");
    for (const bad of [
      "",
      secret.replace("svc_test_", "svc_prod_"),
      secret.replace("svc_test_", "sk_test_"),
      secret.slice(0, -1),
      `${secret}x`,
      secret.replace(/.$/, "-"),
      secret.toUpperCase(),
      ` ${secret}`,
    ]) {
      assert.equal(parseApiKey(bad), null, bad);
    }
  });

  it("hashes with the server secret: same key and secret agree, another secret does not", () => {
    const { secret } = generateApiKey("test");
    const a = randomBytes(32);
    const b = randomBytes(32);
    assert.deepEqual(hashApiKey(secret, a), hashApiKey(secret, a));
    assert.notDeepEqual(hashApiKey(secret, a), hashApiKey(secret, b));
    assert.equal(hashApiKey(secret, a).length, 32);
  });
});
