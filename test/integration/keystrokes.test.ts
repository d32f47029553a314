import { ChangeSet, Text } from "@codemirror/state";
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { KEYSTROKE_LIMITS } from "../../src/domain/keystrokes";
import { OVERLAY_LIMITS } from "../../src/domain/overlay";
import { taskKeys } from "../../src/domain/tasks";
import { recordKeystrokeEdits } from "../../src/durable/attempt/attempt-keystrokes";
import { assignedTask, attemptStub, b64, createAttempt, patchChanges, signIn, startedAttempt, submit, type TestUser } from "../support/worker/attempts";
import { call, errorBody, freshIp } from "../support/worker/client";
import { snapshotTarball } from "../support/worker/tarball";

const BASE = "function add(a, b) {\n  return a - b;\n}\n";
const url = (attemptId: string, query = "") => `/api/v1/attempts/${attemptId}/keystrokes${query}`;

interface Edit {
  path: string;
  t: number;
  changes: unknown;
  doc_length_before: number;
  paste?: boolean;
}
interface Item {
  seq: number;
  kind: "snapshot" | "edit";
  path: string;
  t: number;
  text?: string;
  changes?: unknown;
  paste?: boolean;
}
interface Page {
  items: Item[];
  pagination: { total: number; pages: number; current: number; limit: number };
  recording: { recording: string; edits: number; bytes: number; cap: { edits: number; bytes: number } };
  markers: { kind: string; t: number }[] | null;
}

/** A typist: edits of one file as CodeMirror makes them, each a change set of the document so far. */
class Typist {
  doc: Text;
  t = Date.parse("2026-01-01T10:00:00Z");
  constructor(
    readonly path: string,
    base: string,
  ) {
    this.doc = Text.of(base.split("\n"));
  }
  edit(spec: { from: number; to?: number; insert?: string }, paste = false): Edit {
    const set = ChangeSet.of(spec, this.doc.length);
    const edit = { path: this.path, t: (this.t += 150), changes: set.toJSON(), doc_length_before: this.doc.length, paste };
    this.doc = set.apply(this.doc);
    return edit;
  }
  /** An edit of the document as it is, not applied: one the recording must refuse. */
  draft(spec: { from: number; insert: string }): Edit {
    return { path: this.path, t: this.t + 1, changes: ChangeSet.of(spec, this.doc.length).toJSON(), doc_length_before: this.doc.length };
  }
  type(text: string): Edit[] {
    return [...text].map((ch) => this.edit({ from: this.doc.length, insert: ch }));
  }
}

const post = (user: TestUser, attemptId: string, edits: unknown[], ip?: string) => call(url(attemptId), { method: "POST", token: user.token, body: { edits }, ip });

async function read(user: TestUser, attemptId: string, query = ""): Promise<{ status: number; body: Page }> {
  const res = await call(url(attemptId, query), { token: user.token });
  return { status: res.status, body: (await res.json()) as Page };
}

/** The text of `path` after every item of the recording, replayed from its snapshots. */
function replay(items: Item[], path: string): string {
  let doc: Text | null = null;
  for (const item of items.filter((i) => i.path === path)) {
    doc = item.kind === "snapshot" ? Text.of(item.text!.split("\n")) : ChangeSet.fromJSON(item.changes).apply(doc!);
  }
  return doc!.toString();
}

describe("keystroke recording", () => {
  let setup: Awaited<ReturnType<typeof startedAttempt>>;
  let typist: Typist;

  beforeAll(async () => {
    setup = await startedAttempt();
    await env.BUCKET.put(taskKeys(setup.taskId).snapshot, await snapshotTarball({ "src/add.js": BASE }));
    typist = new Typist("src/add.js", BASE);
  });

  it("records the candidate's edits from the workspace's text, and replaying them gives exactly what was saved", async () => {
    const { candidate, interviewer, attempt } = setup;
    const minus = BASE.indexOf("-");
    const first = [typist.edit({ from: minus, to: minus + 1, insert: "+" }), ...typist.type("// sum\n")];
    const res = await post(candidate, attempt.id, first);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ attempt_id: attempt.id, accepted: first.length, recording: "on", edits: first.length });

    const pasted = typist.edit({ from: 0, insert: "'use strict';\n\n" }, true);
    const created = new Typist("src/new.js", "");
    const second = [pasted, ...typist.type("export { add };\n"), ...created.type("x")];
    expect((await post(candidate, attempt.id, second)).status).toBe(200);
    const final = typist.doc.toString();
    expect((await patchChanges(candidate, attempt.id, { "src/add.js": { op: "upsert", content_b64: b64(final) } })).status).toBe(200);

    const { status, body } = await read(interviewer, attempt.id);
    expect(status).toBe(200);
    expect(body.items[0]).toMatchObject({ seq: 1, kind: "snapshot", path: "src/add.js", text: BASE });
    expect(body.items.filter((i) => i.kind === "edit")).toHaveLength(first.length + second.length);
    expect(body.items.find((i) => i.paste)?.t).toBe(pasted.t);
    const saved = (await (await call(`/api/v1/attempts/${attempt.id}/changes?path=src/add.js`, { token: candidate.token })).json()) as { content_b64: string };
    expect(replay(body.items, "src/add.js")).toBe(atob(saved.content_b64));
    expect(replay(body.items, "src/new.js")).toBe("x");
    expect(body.markers?.map((m) => m.kind)).toEqual(["paste", "save"]);
    expect(body.recording).toMatchObject({ recording: "on", edits: first.length + second.length, cap: { edits: KEYSTROKE_LIMITS.attemptEdits } });

    const paged = await read(interviewer, attempt.id, "?page=2&limit=5");
    expect(paged.body.items.map((i) => i.seq)).toEqual([6, 7, 8, 9, 10]);
    expect(paged.body.markers).toBeNull();
  });

  it("takes a snapshot of a file after every so many of its edits", async () => {
    const { candidate, interviewer, attempt } = setup;
    const earlier = (await read(interviewer, attempt.id, "?limit=5000")).body.items;
    const before = earlier.length;
    const sinceFirst = earlier.filter((i) => i.kind === "edit" && i.path === "src/add.js").length;
    const edits = typist.type("x".repeat(KEYSTROKE_LIMITS.snapshotEvery - sinceFirst));
    expect((await post(candidate, attempt.id, edits)).status).toBe(200);
    const { items } = (await read(interviewer, attempt.id, "?limit=5000")).body;
    const snapshots = items.filter((i) => i.kind === "snapshot" && i.path === "src/add.js");
    expect(snapshots).toHaveLength(2);
    expect(snapshots[1]).toMatchObject({ seq: items.length, t: edits.at(-1)!.t, text: typist.doc.toString() });
    expect(items.length).toBe(before + edits.length + 1);
    const edited = items.filter((i) => i.kind === "edit");
    let doc = Text.of(BASE.split("\n"));
    for (const e of edited.filter((i) => i.path === "src/add.js")) doc = ChangeSet.fromJSON(e.changes).apply(doc);
    expect(doc.toString(), "the snapshot agrees with the edits before it").toBe(snapshots[1]!.text);
  });

  it("422 for a malformed batch and for a change set that does not apply to the recorded file, storing none of it", async () => {
    const { candidate, interviewer, attempt } = setup;
    const good = typist.draft({ from: 0, insert: "a" });
    const count = (await read(interviewer, attempt.id)).body.pagination.total;
    for (const edits of [
      [],
      [{ ...good, changes: "x" }],
      [{ ...good, path: "../etc/passwd" }],
      [{ ...good, t: -1 }],
      [{ ...good, extra: 1 }],
      Array.from({ length: KEYSTROKE_LIMITS.batchEdits + 1 }, () => good),
    ]) {
      expect((await post(candidate, attempt.id, edits)).status).toBe(422);
    }
    const wrongLength = { ...good, changes: [good.doc_length_before + 1, [0, "y"]] };
    const stale = { ...good, doc_length_before: good.doc_length_before + 3, changes: [good.doc_length_before + 3, [0, "y"]] };
    for (const bad of [wrongLength, stale, { ...good, changes: [[5, "x"]], doc_length_before: 5 }]) {
      const res = await post(candidate, attempt.id, [good, bad]);
      expect(res.status).toBe(422);
      expect((await errorBody(res)).detail).toEqual([expect.objectContaining({ loc: ["body", "edits", 1, "changes"] })]);
    }
    expect((await read(interviewer, attempt.id)).body.pagination.total).toBe(count);
  });

  it("starts a file afresh from the workspace when it changed outside the recording (an IDE saved it)", async () => {
    const { candidate, interviewer, attempt } = setup;
    const outside = "// saved from an IDE\n";
    expect((await patchChanges(candidate, attempt.id, { "src/add.js": { op: "upsert", content_b64: b64(outside) } })).status).toBe(200);
    typist.doc = Text.of(outside.split("\n"));
    expect((await post(candidate, attempt.id, typist.type("!"))).status).toBe(200);
    const { items } = (await read(interviewer, attempt.id, "?limit=5000")).body;
    expect(items.at(-2)).toMatchObject({ kind: "snapshot", path: "src/add.js", text: outside });
    expect(replay(items, "src/add.js")).toBe(`${outside}!`);
  });

  it("413 for a body over the limit", async () => {
    const { candidate, attempt } = setup;
    const huge = { path: "big.js", t: 1, changes: [[0, "x".repeat(KEYSTROKE_LIMITS.bodyBytes)]], doc_length_before: 0 };
    expect((await post(candidate, attempt.id, [huge])).status).toBe(413);

    // Nor may edits grow a file past what the changes hold (one stored row), nor one batch start from more bytes than
    // KEYSTROKE_LIMITS.batchBaseBytes of files together (the Worker would hold and read them all).
    const size = OVERLAY_LIMITS.fileBytes - 10;
    const bigs = ["b1", "b2", "b3", "b4", "b5"].map((name) => `${name}.js`);
    const filled = Object.fromEntries(bigs.map((path) => [path, { op: "upsert", content_b64: btoa("a".repeat(size)) }]));
    expect((await patchChanges(candidate, attempt.id, filled)).status).toBe(200);
    const append = (path: string, text: string) => ({ path, t: 1, changes: [size, [0, text]], doc_length_before: size });
    const grown = await post(candidate, attempt.id, [append("b1.js", "x".repeat(20))]);
    expect(grown.status).toBe(413);
    expect(String((await errorBody(grown)).detail)).toMatch(/b1\.js would be over 1048576 bytes/);
    const many = await post(candidate, attempt.id, bigs.map((path) => append(path, "y")));
    expect(many.status).toBe(413);
    expect(String((await errorBody(many)).detail)).toMatch(/together/);
    expect((await post(candidate, attempt.id, [append("b2.js", "y")])).status, "one of them alone").toBe(200);
  });

  it("who may record and who may read: 401, 403, 404 for another candidate and another organization's staff", async () => {
    const { candidate, interviewer, attempt } = setup;
    const edit = new Typist("z.js", "").type("z");
    const stranger = await signIn();
    const otherStaff = await signIn({ role: "interviewer", org_id: `org-${crypto.randomUUID().slice(0, 8)}` });
    expect((await call(url(attempt.id), { method: "POST", body: { edits: edit } })).status).toBe(401);
    expect((await call(url(attempt.id))).status).toBe(401);
    expect((await post(stranger, attempt.id, edit)).status, "another candidate records").toBe(404);
    expect((await post(otherStaff, attempt.id, edit)).status, "another org's staff records").toBe(404);
    expect((await post(interviewer, attempt.id, edit)).status, "staff records").toBe(403);
    expect((await read(stranger, attempt.id)).status, "another candidate reads").toBe(404);
    expect((await read(otherStaff, attempt.id)).status, "another org's staff reads").toBe(404);
    expect((await read(candidate, attempt.id)).status, "the candidate reads").toBe(403);
    expect((await read(interviewer, "att_nope")).status, "no such attempt").toBe(404);
  });

  it("stops at the cap: the batch over it is not stored, and the answer says recording is capped", async () => {
    const { candidate, attempt } = setup;
    const outcome = await runInDurableObject(attemptStub(attempt.id), (_instance, state) => {
      const limits = { ...KEYSTROKE_LIMITS, attemptEdits: 0 };
      const edit = { ...typist.draft({ from: 0, insert: "q" }), paste: false, origin: "candidate" as const, author: null };
      return recordKeystrokeEdits(state.storage, [edit], {}, limits);
    });
    expect(outcome).toMatchObject({ ok: true, value: { recording: "capped", accepted: 0 } });
    const res = await post(candidate, attempt.id, [typist.draft({ from: 0, insert: "r" })]);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ recording: "capped", accepted: 0 });
  });

  it("429 past the burst limit, as every API route", async () => {
    const { candidate, attempt } = setup;
    const ip = freshIp();
    const statuses: number[] = [];
    // 41 requests pass the burst limit of 20 per 10 s even when they straddle two windows.
    for (let i = 0; i < 41; i++) statuses.push((await call(url(attempt.id), { method: "POST", token: candidate.token, body: {}, ip })).status);
    expect(statuses).toContain(429);
  });
});

describe("keystroke recording outside IN_PROGRESS", () => {
  it("409 before the attempt is started and after it is submitted", async () => {
    const edit = new Typist("a.js", "").type("a");
    const fresh = await assignedTask();
    const notStarted = await createAttempt(fresh.candidate, fresh.taskId);
    expect((await post(fresh.candidate, notStarted.id, edit)).status).toBe(409);
    const { candidate, attempt } = await startedAttempt();
    expect((await submit(candidate.token, attempt.id)).status).toBe(202);
    const res = await post(candidate, attempt.id, edit);
    expect(res.status).toBe(409);
    expect(String((await errorBody(res)).detail)).toMatch(/locked/);
  });
});
