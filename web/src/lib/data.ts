// The app's data layer: every API call of a page goes through this module (docs/web-app.md,
// "Data"). `api` and `call` are the typed client and its error handling (../api.ts); on top of
// them this module gives:
// - `read(path, init)`: a GET whose answer is kept for the current view, so the components of one
//   page that read the same thing (who is signed in, the attempt, the task) ask once between them;
//   a read that fails is not kept, so trying again asks again;
// - a view: the page at one address. Navigating (a link, back, forward, navigate()) starts a new
//   view with an empty cache, and so does a write (POST, PATCH, PUT, DELETE; but socket tickets and
//   telemetry, which change nothing a page reads) or a page's reload;
// - `useLoad(load, deps)`: a page's loading, error and data states, where only the newest request's
//   answer lands (`Latest`): an older one that answers late, or one for a page that has gone, is dropped.
import type { FetchResponse, MaybeOptionalInit } from "openapi-fetch";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { paths } from "../../../client/src/index";
import { api, ApiError, call } from "../api";
import { describe } from "./errors";
import { location } from "./router";

export { api, ApiError, call };

// ---- only the newest answer lands --------------------------------------------------------------

/**
 * Which answer may still land: a page asks again when its filters change, and the older
 * request can answer after the newer one. One shared "still mounted" flag cannot tell them
 * apart (the older answer would overwrite the newer); a ticket per request can.
 */
export class Latest {
  private issued = 0;

  /** A ticket for a new request; it holds while no newer ticket is taken and nothing is cancelled. */
  next(): () => boolean {
    const mine = ++this.issued;
    return () => mine === this.issued;
  }

  /** No answer asked for so far may land (the page has gone, or is asking again). */
  cancel(): void {
    this.issued++;
  }
}

// ---- the view's cache --------------------------------------------------------------------------

/**
 * Answers kept for one view. `view()` names the current view (any value; a new one empties the
 * cache); an answer asked for in one view never lands in another's cache, however late it comes.
 */
export class ViewCache {
  private entries = new Map<string, Promise<unknown>>();
  private current: unknown;

  constructor(private readonly view: () => unknown) {
    this.current = view();
  }

  /** The answer of `key` in the current view: `load` runs once, and every reader shares its answer. A failure is forgotten. */
  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const entries = this.entriesNow();
    const kept = entries.get(key) as Promise<T> | undefined;
    if (kept) return kept;
    const asked = load();
    entries.set(key, asked);
    asked.catch(() => {
      if (entries.get(key) === asked) entries.delete(key);
    });
    return asked;
  }

  /** Forgets every answer: the next read of each asks the API again. */
  clear(): void {
    this.entries = new Map();
  }

  private entriesNow(): Map<string, Promise<unknown>> {
    const view = this.view();
    if (view !== this.current) {
      this.current = view;
      this.entries = new Map();
    }
    return this.entries;
  }
}

/** The app's view cache: a view is one value of the router's location, which every navigation replaces. */
export const viewCache = new ViewCache(() => location.peek());

/** Requests that are POSTs but change nothing a page reads: socket tickets and telemetry. */
const CHANGES_NOTHING_READ = [/\/ws-ticket$/, /\/siem\/events\/batch$/];

// Any other write may change what was read: the reads after it ask again.
api.use({
  onRequest({ request }) {
    if (request.method === "GET" || request.method === "HEAD") return undefined;
    const path = new URL(request.url).pathname;
    if (!CHANGES_NOTHING_READ.some((pattern) => pattern.test(path))) viewCache.clear();
    return undefined;
  },
});

/** The API's paths that answer GET. */
type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type GetInit<P extends GetPath> = MaybeOptionalInit<paths[P], "get">;
/** The init argument is optional where the path needs no parameters, as with api.GET. */
type InitArgs<I> = object extends I ? [init?: I] : [init: I];
/** What a GET of `P` answers on success. */
export type ReadData<P extends GetPath, I extends GetInit<P>> = NonNullable<FetchResponse<paths[P]["get"], I, `${string}/${string}`>["data"]>;

/**
 * `call(api.GET(path, init))`, kept for the current view: the first reader asks, the others in
 * the same view get its answer. For what several components of a page read; a value that must be
 * fresh (a poll, a list refetched on a notification) uses `call(api.GET(...))`.
 */
export function read<P extends GetPath, I extends GetInit<P>>(path: P, ...init: InitArgs<I>): Promise<ReadData<P, I>> {
  const [options] = init as [{ params?: unknown } | undefined];
  const key = `${path} ${JSON.stringify(options?.params ?? {})}`;
  const get = api.GET as (path: string, init?: unknown) => Promise<{ data?: ReadData<P, I>; error?: unknown; response: Response }>;
  return viewCache.get(key, () => call(get(path, options)));
}

// ---- a page's load -----------------------------------------------------------------------------

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  /** The error's HTTP status, when it came from the API. */
  status: number | undefined;
  loading: boolean;
  /** Loads again, fresh: the view's kept answers are forgotten first. */
  reload: () => void;
}

/**
 * Loading a page's data: loading, error and data states, reload, no update after unmount, and
 * only the newest request's answer (an older one that answers late is dropped).
 */
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
  const reload = useCallback(() => {
    viewCache.clear();
    setVersion((v) => v + 1);
  }, []);
  return { data: state.data, error: state.error, status: state.status, loading: state.loading, reload };
}
