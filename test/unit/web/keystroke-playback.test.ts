import { ChangeSet, Text } from "@codemirror/state";
import { describe, expect, it } from "vitest";
import {
  formatClock,
  initialPlayer,
  jump,
  MAX_GAP_MS,
  pause,
  play,
  Recording,
  seek,
  setSpeed,
  tick,
  type PlaybackItem,
  type PlaybackMarker,
} from "../../../web/src/interviewer/keystroke-playback";

/** A recording as the API gives it: a first snapshot per file, then edits 1 s apart, a snapshot every `every` edits of a file. */
function recorded(script: { path: string; at?: number; insert: string; paste?: boolean }[], bases: Record<string, string>, every = 3) {
  const items: PlaybackItem[] = [];
  const docs = new Map<string, Text>();
  const since = new Map<string, number>();
  let seq = 0;
  let t = 1_000_000;
  for (const step of script) {
    t += 1000;
    let doc = docs.get(step.path);
    if (!doc) {
      doc = Text.of(bases[step.path]!.split("\n"));
      items.push({ seq: ++seq, kind: "snapshot", path: step.path, t, text: doc.toString() });
    }
    const set = ChangeSet.of({ from: step.at ?? doc.length, insert: step.insert }, doc.length);
    items.push({ seq: ++seq, kind: "edit", path: step.path, t, changes: set.toJSON(), paste: step.paste ?? false });
    doc = set.apply(doc);
    docs.set(step.path, doc);
    const n = (since.get(step.path) ?? 0) + 1;
    since.set(step.path, n % every);
    if (n === every) items.push({ seq: ++seq, kind: "snapshot", path: step.path, t, text: doc.toString() });
  }
  return items;
}

const script = [
  { path: "a.js", insert: "1" },
  { path: "a.js", insert: "2" },
  { path: "b.js", insert: "x" },
  { path: "a.js", insert: "3" },
  { path: "a.js", insert: "PASTED", paste: true },
  { path: "a.js", insert: "4" },
  { path: "a.js", at: 0, insert: "0" },
];

describe("Recording", () => {
  const items = recorded(script, { "a.js": "a:", "b.js": "b:" });

  it("gives each file's document at every position, the same whether loaded at once or page by page", () => {
    const whole = new Recording();
    whole.append(items);
    const paged = new Recording();
    for (let i = 0; i < items.length; i += 4) paged.append(items.slice(i, i + 4));
    expect(whole.length).toBe(script.length);
    expect(whole.paths).toEqual(["a.js", "b.js"]);
    const expected = ["a:", "a:1", "a:12", "a:12", "a:123", "a:123PASTED", "a:123PASTED4", "0a:123PASTED4"];
    for (let p = 0; p <= script.length; p++) {
      expect(whole.document("a.js", p)?.toString(), `a.js at ${p}`).toBe(expected[p]);
      expect(paged.document("a.js", p)?.toString()).toBe(expected[p]);
    }
    expect(whole.document("b.js", 0)?.toString()).toBe("b:");
    expect(whole.document("b.js", 3)?.toString()).toBe("b:x");
    expect(whole.document("c.js", 3)).toBeNull();
  });

  it("maps positions to playback time, with idle gaps shortened", () => {
    const rec = new Recording();
    rec.append([
      { seq: 1, kind: "snapshot", path: "a", t: 0, text: "" },
      { seq: 2, kind: "edit", path: "a", t: 0, changes: [[0, "a"]], paste: false },
      { seq: 3, kind: "edit", path: "a", t: 600_000, changes: [1, [0, "b"]], paste: false },
      { seq: 4, kind: "edit", path: "a", t: 600_500, changes: [2, [0, "c"]], paste: false },
    ]);
    expect([rec.clockOf(0), rec.clockOf(1), rec.clockOf(2), rec.clockOf(3)]).toEqual([0, 0, MAX_GAP_MS, MAX_GAP_MS + 500]);
    expect(rec.duration).toBe(MAX_GAP_MS + 500);
    expect(rec.positionAtClock(0)).toBe(1);
    expect(rec.positionAtClock(MAX_GAP_MS + 499)).toBe(2);
  });
});

describe("the player", () => {
  const items = recorded(script, { "a.js": "", "b.js": "" });
  const rec = new Recording();
  rec.append(items);
  const pasteSeq = items.find((i) => i.kind === "edit" && i.paste)!.seq;
  const markers: PlaybackMarker[] = [
    { kind: "save", t: 1_000_000 + 2500 },
    { kind: "run", t: 1_000_000 + 4500 },
    { kind: "paste", t: 1_000_000 + 5000, seq: pasteSeq },
    { kind: "save", t: 1_000_000 + 6500 },
  ];

  it("plays at 1×, 4× and 16× of the recording's time, pauses, and stops at the end of a complete recording", () => {
    let s = play(rec, initialPlayer);
    s = tick(rec, s, 1000, true);
    expect(s).toMatchObject({ position: 2, clock: 1000, playing: true });
    s = tick(rec, setSpeed(s, 4), 1000, true);
    expect(s).toMatchObject({ position: 6, clock: 5000 });
    s = pause(s);
    expect(tick(rec, s, 1000, true)).toBe(s);
    s = tick(rec, play(rec, setSpeed(s, 16)), 1000, false);
    expect(s).toMatchObject({ position: rec.length, clock: rec.duration, playing: true });
    s = tick(rec, s, 1000, true);
    expect(s.playing).toBe(false);
    expect(play(rec, s)).toMatchObject({ position: 0, clock: 0, playing: true });
  });

  it("seeks within the recording and jumps to the next and previous save, run and paste", () => {
    const at = seek(rec, initialPlayer, 99);
    expect(at.position).toBe(rec.length);
    expect(seek(rec, initialPlayer, 3)).toMatchObject({ position: 3, clock: 2000 });
    let s = jump(rec, markers, initialPlayer, "save", 1);
    expect(s.position).toBe(2);
    s = jump(rec, markers, s, "save", 1);
    expect(s.position).toBe(6);
    expect(jump(rec, markers, s, "save", 1)).toBe(s);
    expect(jump(rec, markers, s, "save", -1).position).toBe(2);
    expect(jump(rec, markers, initialPlayer, "run", 1).position).toBe(4);
    const pasted = jump(rec, markers, initialPlayer, "paste", 1);
    expect(pasted.position).toBe(5);
    expect(rec.editBefore(pasted.position)).toMatchObject({ paste: true, path: "a.js" });
    expect(rec.document("a.js", pasted.position)?.toString()).toBe("123PASTED");
    expect(jump(rec, markers, pasted, "paste", -1)).toBe(pasted);
  });

  it("formats playback time", () => {
    expect([formatClock(0), formatClock(61_000), formatClock(3_601_000)]).toEqual(["0:00", "1:01", "1:00:01"]);
  });
});
