// The bell's list as the user reads it: which notifications to show as read once marked.

export interface Readable {
  id: number;
  read_at: string | null;
}

/** The list with the unread ones `picked` read at `at`; one read before keeps its time. */
export function markRead<T extends Readable>(items: readonly T[], picked: (n: T) => boolean, at: string): T[] {
  return items.map((n) => (!n.read_at && picked(n) ? { ...n, read_at: at } : n));
}
