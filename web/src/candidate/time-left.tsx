// The attempt's time left: a clock updated every second, and words for screen readers that
// change only at minute boundaries (an aria-live region read every second would drown the page).
import { useEffect, useRef, useState } from "preact/hooks";
import { formatClock, minutesLeft, spokenTimeLeft } from "./countdown";

interface Props {
  deadline: string;
  /** Called once when the time is nearly up (to save what is unsaved) and once when it is up. */
  onNearlyUp?: () => void;
  onUp?: () => void;
}

const NEARLY_UP_MS = 20_000;

export function TimeLeft({ deadline, onNearlyUp, onUp }: Props) {
  const end = Date.parse(deadline);
  const [now, setNow] = useState(Date.now());
  const fired = useRef({ nearly: false, up: false });

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  const left = end - now;
  useEffect(() => {
    if (left <= NEARLY_UP_MS && !fired.current.nearly) {
      fired.current.nearly = true;
      onNearlyUp?.();
    }
    if (left <= 0 && !fired.current.up) {
      fired.current.up = true;
      onUp?.();
    }
  }, [left <= NEARLY_UP_MS, left <= 0]);

  const urgent = minutesLeft(left) <= 5;
  return (
    <div class={`time-left${urgent ? " urgent" : ""}`}>
      <span aria-hidden="true">
        Time left <strong class="mono">{formatClock(left)}</strong>
      </span>
      <span class="visually-hidden" role="timer" aria-live="polite" aria-atomic="true">
        {spokenTimeLeft(left)}
      </span>
    </div>
  );
}
