// The states every page has besides its content: loading, an error in words, empty.
import type { ComponentChildren } from "preact";

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
