// Loading a page's data: loading, error and data states, reload, no update after unmount, and
// only the newest request's answer (an older one that answers late is dropped).
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { describe } from "./errors";
import { Latest } from "./latest";

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  /** The error's HTTP status, when it came from the API. */
  status: number | undefined;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; status?: number; loading: boolean }>({ loading: true });
  const [version, setVersion] = useState(0);
  const latest = useRef(new Latest());
  useEffect(() => {
    const current = latest.current.next();
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => current() && setState({ data, loading: false }),
      (error: unknown) => current() && setState({ error: describe(error), status: (error as { status?: number }).status, loading: false }),
    );
    return () => latest.current.cancel();
  }, [...deps, version]);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  return { data: state.data, error: state.error, status: state.status, loading: state.loading, reload };
}
