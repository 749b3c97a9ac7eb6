// Configuration read from the environment once at start, by the relayer and the indexer alike:
// every problem is collected, each naming its variable in one wording, and reported together, so
// a bad deployment fails before it serves and lists everything to fix in one run.

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(
    service: string,
    readonly problems: string[],
  ) {
    super(`invalid ${service} configuration:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** `"a"`, `"a" or "b"`, `"a", "b" or "c"`: the values a variable may take, as a message lists them. */
function listed(values: readonly string[]): string {
  const quoted = values.map((value) => `"${value}"`);
  return quoted.length === 1 ? quoted[0]! : `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}

export class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  problem(message: string): void {
    this.problems.push(message);
  }

  /** The variable's value without surrounding blanks; unset and empty alike read as undefined. */
  text(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === "" ? undefined : value;
  }

  /** The variable's value; unset, a problem that says what it should hold. */
  required(name: string, what: string): string {
    const value = this.text(name);
    if (value === undefined) this.problem(`${name} is required: ${what}`);
    return value ?? "";
  }

  /** A whole number in [min, max] written in decimal digits; `fallback` when unset. */
  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.text(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!/^[0-9]+$/.test(value) || parsed < min || parsed > max) {
      this.problem(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
      return fallback;
    }
    return parsed;
  }

  /** `value` (read from `name`) as a URL of one of `protocols` ("https:", …); undefined if not. */
  url(name: string, value: string, protocols: readonly string[]): URL | undefined {
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) {
        this.problem(`${name} must be a ${protocols.join(" or ")} URL, got "${value}"`);
        return undefined;
      }
      return parsed;
    } catch {
      this.problem(`${name} is not a URL: "${value}"`);
      return undefined;
    }
  }

  /** One of `values`; `fallback` when unset, and when the value is none of them (a problem then). */
  choice<T extends string>(name: string, fallback: T, values: readonly T[]): T {
    const value = this.text(name);
    if (value === undefined) return fallback;
    if ((values as readonly string[]).includes(value)) return value as T;
    this.problem(`${name} must be ${listed(values)}, got "${value}"`);
    return fallback;
  }

  /** "true" or "false"; `fallback` when unset. */
  flag(name: string, fallback: boolean): boolean {
    return this.choice(name, fallback ? "true" : "false", ["true", "false"]) === "true";
  }

  /** `config` when nothing was wrong; else every problem at once, as the service's ConfigError. */
  finish<T>(service: string, config: T): T {
    if (this.problems.length > 0) throw new ConfigError(service, this.problems);
    return config;
  }
}
