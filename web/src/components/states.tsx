// The states every page has besides its content: loading, an error in words, empty.
import type { ComponentChildren } from "preact";
import { notFoundText, retryable } from "../lib/errors";

/** Where a page that cannot show what was asked for sends the user instead. */
export interface WayBack {
  href: string;
  label: string;
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

export function ErrorBox({ message, onRetry }: { message: string; onRetry?: () => void }) {
  return (
    <div class="state error" role="alert">
      <p>{message}</p>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/** Nothing to show at this address, and where to go instead. */
export function NotFound({ message, back }: { message: string; back: WayBack }) {
  return (
    <div class="state error" role="alert">
      <p>{message}</p>
      <p>
        <a href={back.href}>{back.label}</a>
      </p>
    </div>
  );
}

/**
 * A page's data that could not be loaded. A 404 says what is missing and leads back, since
 * asking again finds nothing; other errors offer Try again only when it may help.
 */
export function LoadError({ error, status, what, back, onRetry }: { error: string; status: number | undefined; what: string; back: WayBack; onRetry: () => void }) {
  if (status === 404) return <NotFound message={notFoundText(what)} back={back} />;
  if (retryable(status)) return <ErrorBox message={error} onRetry={onRetry} />;
  return <NotFound message={error} back={back} />;
}
