// The keystroke playback's logic (docs/web-app.md, "Keystroke playback"): the recording's
// snapshots and change sets (GET .../keystrokes) as each file's document at any position, and a
// player over them: 1×, 4× and 16×, pause, seek, and jumps to the saves, runs and pastes.
// A position is a count of edits applied. The recording arrives page by page and is appended
// as it comes; a file's document at a position is built from its newest snapshot at or before
// it, so seeking never replays from the start. Idle time longer than MAX_GAP_MS plays as
// MAX_GAP_MS: an hour with long pauses still plays in minutes at 16×. Pure: no DOM, no clock.
import { ChangeSet, Text } from "@codemirror/state";

export type PlaybackItem =
  | { seq: number; kind: "snapshot"; path: string; t: number; text: string }
  | { seq: number; kind: "edit"; path: string; t: number; changes: unknown; paste: boolean; origin?: string; author?: string | null };

export type MarkerKind = "save" | "run" | "paste";
/** A point to jump to; a paste names its edit by `seq`. */
export interface PlaybackMarker {
  kind: MarkerKind;
  t: number;
  seq?: number;
}

export const SPEEDS = [1, 4, 16] as const;
export type Speed = (typeof SPEEDS)[number];
export const MAX_GAP_MS = 5000;

interface Edit {
  /** Its place in the recording: edits before it. */
  index: number;
  seq: number;
  path: string;
  t: number;
  /** When it plays: ms from the first edit, idle gaps shortened. */
  clock: number;
  changes: ChangeSet;
  paste: boolean;
}

interface Snapshot {
  /** Edits of the recording before it. */
  at: number;
  text: Text;
}

const textOf = (s: string) => Text.of(s.split("\n"));

/** Index of the first element of sorted `list` for which `before` is false. */
function firstNotBefore<T>(list: readonly T[], before: (item: T) => boolean): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(list[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class Recording {
  private readonly edits: Edit[] = [];
  private readonly byPath = new Map<string, Edit[]>();
  private readonly snapshots = new Map<string, Snapshot[]>();
  private readonly bySeq = new Map<number, number>();

  /** Appends the next items of the recording, in order. */
  append(items: readonly PlaybackItem[]): void {
    for (const item of items) {
      if (item.kind === "snapshot") {
        const list = this.snapshots.get(item.path) ?? [];
        list.push({ at: this.edits.length, text: textOf(item.text) });
        this.snapshots.set(item.path, list);
        continue;
      }
      const last = this.edits.at(-1);
      const edit: Edit = {
        index: this.edits.length,
        seq: item.seq,
        path: item.path,
        t: item.t,
        clock: last ? last.clock + Math.min(Math.max(item.t - last.t, 0), MAX_GAP_MS) : 0,
        changes: ChangeSet.fromJSON(item.changes),
        paste: item.paste,
      };
      this.edits.push(edit);
      this.bySeq.set(item.seq, edit.index);
      const list = this.byPath.get(item.path) ?? [];
      list.push(edit);
      this.byPath.set(item.path, list);
    }
  }

  /** Edits in the recording so far. */
  get length(): number {
    return this.edits.length;
  }

  /** The files of the recording, in the order they first appear. */
  get paths(): string[] {
    return [...this.snapshots.keys()];
  }

  /** How long the recording plays, at 1×. */
  get duration(): number {
    return this.edits.at(-1)?.clock ?? 0;
  }

  /** The edit at a position's end (the newest applied), if any. */
  editBefore(position: number): { path: string; t: number; paste: boolean } | undefined {
    return position > 0 ? this.edits[position - 1] : undefined;
  }

  /**
   * `path`'s document after the first `position` edits: its newest snapshot at or before the
   * position (its first, the text before any edit, for a file first edited later) and its edits
   * after that snapshot up to the position. Null for a file the recording does not have.
   */
  document(path: string, position: number): Text | null {
    const snapshots = this.snapshots.get(path);
    if (!snapshots?.length) return null;
    const pos = Math.max(0, Math.min(position, this.edits.length));
    const from = snapshots[Math.max(0, firstNotBefore(snapshots, (s) => s.at <= pos) - 1)]!;
    const edits = this.byPath.get(path) ?? [];
    let doc = from.text;
    for (let i = firstNotBefore(edits, (e) => e.index < from.at); i < edits.length && edits[i]!.index < pos; i++) doc = edits[i]!.changes.apply(doc);
    return doc;
  }

  /** Positions reached by `clock` ms of playback: the edits due by then. */
  positionAtClock(clock: number): number {
    return firstNotBefore(this.edits, (e) => e.clock <= clock);
  }

  /** The playback time of a position: that of its newest edit. */
  clockOf(position: number): number {
    return position > 0 ? (this.edits[Math.min(position, this.edits.length) - 1]?.clock ?? 0) : 0;
  }

  /** The position of a marker: after its paste, or after the edits made by its time. */
  positionOf(marker: PlaybackMarker): number {
    const index = marker.seq === undefined ? undefined : this.bySeq.get(marker.seq);
    return index !== undefined ? index + 1 : firstNotBefore(this.edits, (e) => e.t <= marker.t);
  }
}

export interface PlayerState {
  position: number;
  /** Playback time, ms at 1× (see Recording.clockOf). */
  clock: number;
  playing: boolean;
  speed: Speed;
}

export const initialPlayer: PlayerState = { position: 0, clock: 0, playing: false, speed: 1 };

/**
 * The player after `elapsedMs` of real time: at its speed, up to the end of what is loaded;
 * it pauses at the end only once the recording is `complete`, and waits for more otherwise.
 */
export function tick(recording: Recording, state: PlayerState, elapsedMs: number, complete: boolean): PlayerState {
  if (!state.playing) return state;
  const clock = Math.min(state.clock + elapsedMs * state.speed, recording.duration);
  const position = recording.positionAtClock(clock);
  const ended = complete && position >= recording.length;
  return { ...state, clock, position, playing: !ended };
}

export function play(recording: Recording, state: PlayerState): PlayerState {
  // Play at the end starts again from the beginning.
  return state.position >= recording.length ? { ...state, position: 0, clock: 0, playing: true } : { ...state, playing: true };
}

export const pause = (state: PlayerState): PlayerState => ({ ...state, playing: false });

export const setSpeed = (state: PlayerState, speed: Speed): PlayerState => ({ ...state, speed });

export function seek(recording: Recording, state: PlayerState, position: number): PlayerState {
  const pos = Math.max(0, Math.min(Math.round(position), recording.length));
  return { ...state, position: pos, clock: recording.clockOf(pos) };
}

/**
 * The player at the next (`direction` 1) or previous (-1) marker of `kind` from its position,
 * or as it is when there is none that way.
 */
export function jump(recording: Recording, markers: readonly PlaybackMarker[], state: PlayerState, kind: MarkerKind, direction: 1 | -1): PlayerState {
  const positions = markers.filter((m) => m.kind === kind).map((m) => recording.positionOf(m));
  const target = direction === 1 ? Math.min(...positions.filter((p) => p > state.position)) : Math.max(...positions.filter((p) => p < state.position));
  return Number.isFinite(target) ? seek(recording, state, target) : state;
}

/** m:ss (h:mm:ss from an hour) of a playback time. */
export function formatClock(ms: number): string {
  const s = Math.floor(ms / 1000);
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const two = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}
