// A record that is still changing on the server (an import, a draft's validation, scoring):
// loaded once, loaded again as soon as a matching notification arrives, and polled with growing
// pauses as the fallback for a notification missed while the socket was down. The pauses start
// at about 2 s and grow to 30 s (lib/backoff.ts), well inside the API's 60 requests a minute.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { backoffMs } from "../lib/backoff";
import { ApiError, describe } from "../lib/errors";
import { onNotification, type AppNotification } from "../lib/notification-socket";

/** "poll": still changing, watch and poll; "listen": may change, but only a notification says when; "done": settled. */
export type WatchMode = "poll" | "listen" | "done";

export interface Watched<T> {
  data: T | undefined;
  /** The first load's failure: there is nothing to show. */
  error: string | undefined;
  /** That failure's HTTP status, when it came from the API: a 404 is not worth loading again. */
  status: number | undefined;
  /** A later load's failure: the data shown may be out of date; polling goes on. */
  staleError: string | undefined;
  loading: boolean;
  reload: () => void;
  /** Shows a value the page already has (an answer to a PATCH) without loading again. */
  replace: (value: T) => void;
}

interface State<T> {
  data?: T;
  error?: string;
  status?: number;
  staleError?: string;
  loading: boolean;
}

// Polls start at the third step of the backoff (about 2 s): the notification is the fast path.
const FIRST_POLL_STEP = 3;

export function useWatched<T>(
  load: () => Promise<T>,
  deps: unknown[],
  mode: (value: T) => WatchMode,
  matches: (notification: AppNotification) => boolean,
): Watched<T> {
  const [state, setState] = useState<State<T>>({ loading: true });
  const latest = useRef({ load, mode, matches });
  latest.current = { load, mode, matches };
  // Answers to loads begun before the deps changed (another task's page) are dropped.
  const generation = useRef(0);

  const fetchNow = useCallback((first: boolean) => {
    const mine = generation.current;
    if (first) setState({ loading: true });
    else setState((s) => (s.data === undefined ? { loading: true } : s));
    latest.current.load().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (error: unknown) =>
        mine === generation.current &&
        setState((s) =>
          s.data === undefined
            ? { error: describe(error), status: error instanceof ApiError ? error.status : undefined, loading: false }
            : { ...s, staleError: describe(error), loading: false },
        ),
    );
  }, []);

  useEffect(() => {
    generation.current += 1;
    fetchNow(true);
    return () => {
      generation.current += 1;
    };
  }, deps);

  const current = state.data === undefined ? "done" : latest.current.mode(state.data);
  const polls = useRef(0);
  useEffect(() => {
    if (current !== "poll") {
      polls.current = 0;
      return;
    }
    polls.current += 1;
    const timer = setTimeout(() => fetchNow(false), backoffMs(polls.current + FIRST_POLL_STEP - 1));
    return () => clearTimeout(timer);
    // Every answer (a new state object) arms the next poll, one pause longer.
  }, [current, state]);

  useEffect(() => {
    if (current === "done") return;
    const stop = onNotification((n) => {
      if (latest.current.matches(n)) fetchNow(false);
    });
    return () => {
      stop();
    };
  }, [current]);

  const reload = useCallback(() => fetchNow(false), []);
  const replace = useCallback((value: T) => setState({ data: value, loading: false }), []);
  return { data: state.data, error: state.error, status: state.status, staleError: state.staleError, loading: state.loading, reload, replace };
}
