// The app's router: the address bar is the state. Pages are matched by pattern
// (`/attempts/:attemptId`), links are ordinary <a href> (so they work with the keyboard, a
// middle click and a copy), and navigate() moves without a reload.
import { signal } from "@preact/signals";

export interface Location {
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

export const location = signal<Location>(typeof window === "undefined" ? { path: "/", query: new URLSearchParams() } : current());

/** Moves to `to` (path and query) without reloading; `replace` leaves no history entry. */
export function navigate(to: string, replace = false): void {
  if (replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  location.value = current();
  window.scrollTo(0, 0);
}

/** The parameters of `path` under `pattern`, or null when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const have = path.split("/").filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const h = have[i]!;
    if (w.startsWith(":")) {
      try {
        params[w.slice(1)] = decodeURIComponent(h);
      } catch {
        return null;
      }
    } else if (w !== h) return null;
  }
  return params;
}

/** Same-origin link clicks become navigate() calls; other clicks (new tab, download) stay the browser's. */
export function interceptLinks(): void {
  window.addEventListener("popstate", () => {
    location.value = current();
  });
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest?.("a");
    if (!anchor || anchor.target || anchor.hasAttribute("download")) return;
    const url = new URL(anchor.href, window.location.href);
    if (url.origin !== window.location.origin || url.pathname.startsWith("/api/")) return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
}
