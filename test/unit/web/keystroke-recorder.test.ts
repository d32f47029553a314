import { EditorState } from "@codemirror/state";
import { describe, expect, it } from "vitest";
import { editOf, KeystrokeBatcher, remoteEdit, takeBatch, type RecordedEdit, type SendAnswer } from "../../../web/src/candidate/keystroke-recorder";

const state = EditorState.create({ doc: "abc" });

describe("editOf", () => {
  it("keeps the change set, the length before, and marks pastes, drops and remote edits", () => {
    const typed = editOf("a.js", state.update({ changes: { from: 3, insert: "d" }, userEvent: "input.type" }), 7);
    expect(typed).toEqual({ path: "a.js", t: 7, changes: [3, [0, "d"]], doc_length_before: 3, paste: false, origin: "candidate", author: null });
    expect(editOf("a.js", state.update({ changes: { from: 0, insert: "x" }, userEvent: "input.paste" }), 1)?.paste).toBe(true);
    expect(editOf("a.js", state.update({ changes: { from: 0, insert: "x" }, userEvent: "input.drop" }), 1)?.paste).toBe(true);
    const remote = editOf("a.js", state.update({ changes: { from: 0, to: 1 }, annotations: remoteEdit.of({ author: "usr_1" }) }), 1);
    expect(remote).toMatchObject({ origin: "remote", author: "usr_1", changes: [[1], 2], paste: false });
    expect(editOf("a.js", state.update({ selection: { anchor: 1 } }), 1)).toBeNull();
  });
});

function edit(path: string, t: number): RecordedEdit {
  return { path, t, changes: [0, [0, "x"]], doc_length_before: 0, paste: false, origin: "candidate", author: null };
}

function setUp(answers: SendAnswer[] = []) {
  const sent: { edits: RecordedEdit[]; keepalive: boolean }[] = [];
  const due: (() => void)[] = [];
  const batcher = new KeystrokeBatcher({
    send: async (edits, keepalive) => {
      sent.push({ edits: [...edits], keepalive });
      return answers.shift() ?? { ok: true, recording: "on" };
    },
    timers: { set: (cb) => due.push(cb), clear: () => {} },
  });
  const fire = async () => {
    for (const cb of due.splice(0)) cb();
    await batcher.flush();
  };
  return { batcher, sent, fire, due };
}

describe("KeystrokeBatcher", () => {
  it("sends a file's first edit at once, then batches by interval, and flushes when typing moves to another file", async () => {
    const { batcher, sent, fire } = setUp();
    batcher.record(edit("a", 1));
    await batcher.flush();
    expect(sent.map((s) => s.edits.length)).toEqual([1]);
    batcher.record(edit("a", 2));
    batcher.record(edit("a", 3));
    expect(sent).toHaveLength(1);
    await fire();
    expect(sent[1]!.edits.map((e) => e.t)).toEqual([2, 3]);
    batcher.record(edit("a", 4));
    await batcher.flush(true);
    expect(sent[2]).toEqual({ edits: [edit("a", 4)], keepalive: true });
    batcher.record(edit("a", 5));
    batcher.record(edit("b", 6));
    await batcher.flush();
    expect(sent[3]!.edits.map((e) => e.t)).toEqual([5, 6]);
  });

  it("keeps what is typed while a batch is on its way for the next interval: one request per interval, not one per key", async () => {
    const sent: number[][] = [];
    const due: (() => void)[] = [];
    let answer: (a: SendAnswer) => void = () => {};
    const batcher = new KeystrokeBatcher({
      send: (edits) => {
        sent.push(edits.map((e) => e.t));
        return new Promise((resolve) => (answer = resolve));
      },
      timers: { set: (cb) => due.push(cb), clear: () => {} },
    });
    batcher.record(edit("a", 1));
    for (let t = 2; t <= 5; t++) batcher.record(edit("a", t));
    answer({ ok: true, recording: "on" });
    await Promise.resolve();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(sent).toEqual([[1]]);
    for (const cb of due.splice(0)) cb();
    answer({ ok: true, recording: "on" });
    await batcher.flush();
    expect(sent).toEqual([[1], [2, 3, 4, 5]]);
  });

  it("stops for good when the recording is capped or the attempt takes no more", async () => {
    for (const answer of [{ ok: true, recording: "capped" }, { ok: false, status: 409 }] as SendAnswer[]) {
      const { batcher, sent } = setUp([answer]);
      batcher.record(edit("a", 1));
      await batcher.flush();
      batcher.record(edit("a", 2));
      await batcher.flush();
      expect(batcher.stopped).toBe(true);
      expect(sent).toHaveLength(1);
    }
  });

  it("keeps a batch that failed for a passing reason and sends it again; records no more of a file refused as inconsistent", async () => {
    const { batcher, sent, fire } = setUp([{ ok: false, status: 0 }, { ok: true, recording: "on" }, { ok: false, status: 422 }]);
    batcher.record(edit("a", 1));
    await batcher.flush();
    expect(batcher.held).toBe(1);
    await fire();
    expect(sent.map((s) => s.edits.map((e) => e.t))).toEqual([[1], [1]]);
    batcher.record(edit("b", 2));
    await batcher.flush();
    batcher.record(edit("b", 3));
    batcher.record(edit("a", 4));
    await batcher.flush();
    expect(sent.slice(3).flatMap((s) => s.edits.map((e) => e.path))).toEqual(["a"]);
    expect(batcher.stopped).toBe(false);
  });

  it("takes batches within the edit and byte limits, at least one edit", () => {
    const pending = [edit("a", 1), edit("a", 2), edit("a", 3)];
    expect(takeBatch(pending, 2, 10_000).map((e) => e.t)).toEqual([1, 2]);
    expect(takeBatch(pending, 10, 1).map((e) => e.t)).toEqual([3]);
    expect(pending).toEqual([]);
  });
});
