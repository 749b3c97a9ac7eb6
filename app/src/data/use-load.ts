// A value loaded asynchronously, with its loading and error states and a way to load it again.
import { useCallback, useEffect, useState } from "react";

export type Loaded<T> = { state: "loading" } | { state: "error"; error: unknown } | { state: "ready"; value: T };

export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): [Loaded<T>, () => void, (value: T) => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: "loading" });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setLoaded((previous) => (previous.state === "ready" ? previous : { state: "loading" }));
    load().then(
      (value) => current && setLoaded({ state: "ready", value }),
      (error: unknown) => current && setLoaded({ state: "error", error }),
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  const set = useCallback((value: T) => setLoaded({ state: "ready", value }), []);
  return [loaded, reload, set];
}
