// The attempt's time left, as a clock to look at and as words to announce: the words change
// only at minute boundaries, so a screen reader is not told the time every second.

/** "1:05:09" or "4:09"; "0:00" once the time is up. */
export function formatClock(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const ss = String(seconds).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${ss}` : `${minutes}:${ss}`;
}

/** Whole minutes left, rounded up: the same for every second of a minute. */
export function minutesLeft(ms: number): number {
  return Math.max(0, Math.ceil(ms / 60_000));
}

export function spokenTimeLeft(ms: number): string {
  if (ms <= 0) return "Time is up.";
  const minutes = minutesLeft(ms);
  if (minutes <= 1) return "Less than a minute left.";
  if (minutes < 60) return `${minutes} minutes left.`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return `${hours} ${hours === 1 ? "hour" : "hours"}${rest ? ` ${rest} ${rest === 1 ? "minute" : "minutes"}` : ""} left.`;
}
