import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SubmissionPayload } from "../../src/domain/attempts";
import type { SubmittedWork } from "../../src/durable/attempt/attempt-types";
import { OVERLAY_LIMITS } from "../../src/domain/overlay";
import { taskKeys } from "../../src/domain/tasks";
import {
  assignedTask,
  attemptStub,
  b64,
  createAttempt,
  openIdeSession,
  patchChanges,
  startedAttempt,
  submit,
  type AttemptJson,
  type TestUser,
} from "../support/worker/attempts";
import { call, errorBody, eventually } from "../support/worker/client";
import { acceptingRunner } from "../support/worker/fake-runner";
import { snapshotTarball } from "../support/worker/tarball";

// Scoring starts after each accepted submission; the runner is the one outside party faked.
let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

const SLUGIFY = ["export function slugify(text) {", "  return text", "    .toLowerCase()", "    .replace(/[^a-z0-9]+/g, '-')", "    .replace(/^-|-$/g, '');", "}", ""].join("\n");

/** The task's base, stored as GitHub serves it (a tarball with one top-level folder). */
const BASE: Record<string, string> = {
  "src/slugify.js": SLUGIFY,
  "lib/a.js": "export const a = 1;\n",
  "README.md": "# slugify\n",
  "test/slugify.test.js": "import test from 'node:test';\n",
};

/** A started attempt whose task has the base above in the bucket. */
async function attemptOnBase() {
  const setup = await startedAttempt();
  await env.BUCKET.put(taskKeys(setup.taskId).snapshot, await snapshotTarball(BASE));
  return setup;
}

const section = (path: string, hunks: string) => `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n${hunks}`;
const SLUGIFY_CHANGE = section(
  "src/slugify.js",
  "@@ -1,3 +1,4 @@\n-export function slugify(text) {\n+export function slugify(text, maxLength = Infinity) {\n   return text\n+    .slice(0, maxLength)\n     .toLowerCase()\n",
);
const SLUGIFY_AFTER = SLUGIFY.replace("slugify(text) {", "slugify(text, maxLength = Infinity) {").replace("  return text\n", "  return text\n    .slice(0, maxLength)\n");
const FULL_DIFF =
  SLUGIFY_CHANGE +
  "diff --git a/src/new.js b/src/new.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/new.js\n@@ -0,0 +1,2 @@\n+export const n = 2;\n+// new\n" +
  "diff --git a/README.md b/README.md\ndeleted file mode 100644\n--- a/README.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# slugify\n" +
  "diff --git a/lib/a.js b/lib/b.js\nsimilarity index 90%\nrename from lib/a.js\nrename to lib/b.js\n--- a/lib/a.js\n+++ b/lib/b.js\n@@ -1 +1 @@\n-export const a = 1;\n+export const b = 1;\n";
const FULL_FILES = ["README.md", "lib/a.js", "lib/b.js", "src/new.js", "src/slugify.js"];

interface OverlayJson {
  items: { path: string; op: string; size: number; updated_at: string }[];
  files: number;
}
const overlayOf = async (user: TestUser, attemptId: string) =>
  (await (await call(`/api/v1/attempts/${attemptId}/changes`, { token: user.token })).json()) as OverlayJson;
const fileOf = async (user: TestUser, attemptId: string, path: string) =>
  ((await (await call(`/api/v1/attempts/${attemptId}/changes?path=${encodeURIComponent(path)}`, { token: user.token })).json()) as { content_b64: string | null })
    .content_b64;
const statusOf = async (user: TestUser, attemptId: string) =>
  ((await (await call(`/api/v1/attempts/${attemptId}`, { token: user.token })).json()) as AttemptJson).status;

async function expect422(res: Response, expected: { loc: (string | number)[]; type: string; msg: RegExp }[]) {
  expect(res.status).toBe(422);
  const detail = (await errorBody(res)).detail as { loc: unknown; msg: string; type: string }[];
  expect(detail).toEqual(expected.map((e) => ({ loc: e.loc, type: e.type, msg: expect.stringMatching(e.msg) })));
}

describe("POST /attempts/{id}/submit with git_diff", () => {
  it("202: the diff's files replace the saved overlay, frozen and scored; files only the overlay changed are not submitted", async () => {
    const { candidate, attempt, taskId } = await attemptOnBase();
    await env.BUCKET.put(taskKeys(taskId).testPatch, section("test/slugify.test.js", "@@ -1 +1 @@\n-import test from 'node:test';\n+x\n"));
    const saved = await patchChanges(candidate, attempt.id, {
      "src/slugify.js": { op: "upsert", content_b64: b64(SLUGIFY_AFTER) },
      "src/only-saved.js": { op: "upsert", content_b64: b64("not in the diff\n") },
    });
    expect(saved.status).toBe(200);
    const savedAt = (await overlayOf(candidate, attempt.id)).items.find((e) => e.path === "src/slugify.js")?.updated_at;

    const res = await submit(candidate.token, attempt.id, { git_diff: FULL_DIFF, changed_files: ["src/slugify.js", "src/new.js", "README.md", "lib/b.js", "lib/a.js"] });
    expect(res.status).toBe(202);
    const submitted = (await res.json()) as AttemptJson;
    expect(submitted).toMatchObject({ status: "SUBMITTED", submission: { changed_files: 5, overlay: { files: 5 } } });

    const overlay = await overlayOf(candidate, attempt.id);
    expect(overlay.items.map((e) => [e.path, e.op])).toEqual([
      ["README.md", "delete"],
      ["lib/a.js", "delete"],
      ["lib/b.js", "upsert"],
      ["src/new.js", "upsert"],
      ["src/slugify.js", "upsert"],
    ]);
    expect(atob((await fileOf(candidate, attempt.id, "src/slugify.js"))!)).toBe(SLUGIFY_AFTER);
    expect(atob((await fileOf(candidate, attempt.id, "src/new.js"))!)).toBe("export const n = 2;\n// new\n");
    expect(atob((await fileOf(candidate, attempt.id, "lib/b.js"))!)).toBe("export const b = 1;\n");
    // The same content as saved is not a later change: the runs before submission still tested the final work.
    expect(overlay.items.find((e) => e.path === "src/slugify.js")?.updated_at).toBe(savedAt);
    expect(overlay.items.find((e) => e.path === "src/new.js")?.updated_at).toBe(submitted.submitted_at);

    const frozen = ((await attemptStub(attempt.id).submittedWork()) as SubmittedWork | null)?.overlay;
    expect(frozen?.map((f) => f.path)).toEqual(FULL_FILES);
    const payload = (await attemptStub(attempt.id).submissionPayload()) as SubmissionPayload | null;
    expect(payload?.git_diff).toBe(FULL_DIFF);

    const jobId = await eventually(async () => {
      const row = await env.DB.prepare("SELECT workspace_job_id FROM scores WHERE attempt_id = ?").bind(attempt.id).first<{ workspace_job_id: string | null }>();
      return row?.workspace_job_id ?? undefined;
    }, 20_000);
    const spec = await (await env.BUCKET.get(`runner-jobs/${jobId}/spec.json`))!.json<{ files: { path: string }[] }>();
    expect(spec.files.map((f) => f.path)).toEqual(FULL_FILES);

    const again = await submit(candidate.token, attempt.id, { git_diff: FULL_DIFF });
    expect(again.status).toBe(409);
    expect(String((await errorBody(again)).detail)).toMatch(/is locked: it was submitted/);
  });

  it("with an IDE session token and nothing saved: an IDE-only submission is scored on the diff's files", async () => {
    const { candidate, attempt } = await attemptOnBase();
    const session = (await (await openIdeSession(candidate, attempt.id)).json()) as { session_token: string };
    const res = await submit(session.session_token, attempt.id, { git_diff: SLUGIFY_CHANGE, changed_files: ["src/slugify.js"] });
    expect(res.status).toBe(202);
    expect(((await res.json()) as AttemptJson).submission).toMatchObject({ overlay: { files: 1, total_bytes: new TextEncoder().encode(SLUGIFY_AFTER).length } });
    const frozen = ((await attemptStub(attempt.id).submittedWork()) as SubmittedWork | null)?.overlay;
    expect(frozen?.map((f) => [f.path, new TextDecoder().decode(f.content!)])).toEqual([["src/slugify.js", SLUGIFY_AFTER]]);
  });

  it("an empty git_diff submits the saved overlay as it is, and changed_files is not checked against anything", async () => {
    const { candidate, attempt } = await attemptOnBase();
    await patchChanges(candidate, attempt.id, { "src/only-saved.js": { op: "upsert", content_b64: b64("saved\n") } });
    const res = await submit(candidate.token, attempt.id, { git_diff: "", changed_files: ["anything.js"] });
    expect(res.status).toBe(202);
    expect((await overlayOf(candidate, attempt.id)).items.map((e) => e.path)).toEqual(["src/only-saved.js"]);
  });
});

describe("a refused diff locks nothing: the attempt stays IN_PROGRESS with its overlay", () => {
  async function expectUntouched(candidate: TestUser, attemptId: string) {
    expect(await statusOf(candidate, attemptId)).toBe("IN_PROGRESS");
    expect((await overlayOf(candidate, attemptId)).items.map((e) => e.path)).toEqual(["src/only-saved.js"]);
  }
  async function attemptWithSavedWork() {
    const setup = await attemptOnBase();
    await patchChanges(setup.candidate, setup.attempt.id, { "src/only-saved.js": { op: "upsert", content_b64: b64("saved\n") } });
    return setup;
  }

  it("a diff that does not apply: 422 naming the first hunk that fails; the fixed diff then submits", async () => {
    const { candidate, attempt } = await attemptWithSavedWork();
    const stale = section("src/slugify.js", "@@ -1 +1 @@\n-export function slugify(text) {\n+export function slugify(s) {\n@@ -4,2 +4,2 @@\n-    .replace(/[^a-z]+/g, '-')\n+    .replace(/\\W+/g, '-')\n     .replace(/^-|-$/g, '');\n");
    await expect422(await submit(candidate.token, attempt.id, { git_diff: stale }), [
      {
        loc: ["body", "git_diff"],
        type: "diff_does_not_apply",
        msg: /^git_diff does not apply to the task's base: hunk 2 of src\/slugify\.js \(@@ -4,2 \+4,2 @@\) does not fit: line 4 of the base is/,
      },
    ]);
    await expectUntouched(candidate, attempt.id);
    expect((await submit(candidate.token, attempt.id, { git_diff: SLUGIFY_CHANGE })).status).toBe(202);
  });

  it("a diff that touches a hidden test: 422", async () => {
    const { candidate, attempt } = await attemptWithSavedWork();
    const rigged = SLUGIFY_CHANGE + section("test/slugify.test.js", "@@ -1 +1 @@\n-import test from 'node:test';\n+process.exit(0);\n");
    await expect422(await submit(candidate.token, attempt.id, { git_diff: rigged }), [
      { loc: ["body", "git_diff"], type: "hidden_test", msg: /^test\/slugify\.test\.js is a hidden test of the task/ },
    ]);
    await expectUntouched(candidate, attempt.id);
  });

  it.each([
    ["../", "../outside.js", /a path has no '\.\.' segments/],
    ["an absolute path", "/etc/passwd", /a path is relative to the repository root/],
    [".git/", ".git/hooks/pre-commit", /a path is not inside a \.git directory/],
  ])("a diff that escapes the tree (%s): 422", async (_name, path, msg) => {
    const { candidate, attempt } = await attemptWithSavedWork();
    const escaping = `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+pwned\n`;
    await expect422(await submit(candidate.token, attempt.id, { git_diff: escaping }), [{ loc: ["body", "git_diff"], type: "invalid_path", msg }]);
    await expectUntouched(candidate, attempt.id);
  });

  it("changed_files that do not match the diff: 422 at each", async () => {
    const { candidate, attempt } = await attemptWithSavedWork();
    await expect422(await submit(candidate.token, attempt.id, { git_diff: FULL_DIFF, changed_files: ["src/slugify.js", "src/new.js", "README.md", "lib/b.js", "src/only-saved.js"] }), [
      { loc: ["body", "changed_files", 4], type: "not_in_diff", msg: /^src\/only-saved\.js is not changed by git_diff$/ },
      { loc: ["body", "changed_files"], type: "missing_from_list", msg: /^lib\/a\.js is changed by git_diff but not listed$/ },
    ]);
    await expectUntouched(candidate, attempt.id);
  });

  it.each([
    ["not a git diff", "--- a/src/a.js\n+++ b/src/a.js\n", "invalid_diff", /does not start with "diff --git"/],
    [
      "a binary diff",
      "diff --git a/logo.png b/logo.png\nindex 0123456..789abcd 100644\nBinary files a/logo.png and b/logo.png differ\n",
      "binary_diff",
      /^logo\.png: binary diffs are not taken/,
    ],
    ["a file not in the base", section("src/missing.js", "@@ -1 +1 @@\n-a\n+b\n"), "diff_does_not_apply", /src\/missing\.js is not a file of the base/],
    ["mode changes alone", "diff --git a/src/slugify.js b/src/slugify.js\nold mode 100644\nnew mode 100755\n", "empty_diff", /changes no file's content/],
  ])("%s: 422", async (_name, diff, type, msg) => {
    const { candidate, attempt } = await attemptWithSavedWork();
    await expect422(await submit(candidate.token, attempt.id, { git_diff: diff }), [{ loc: ["body", "git_diff"], type, msg }]);
    await expectUntouched(candidate, attempt.id);
  });

  it("a bare diff header sent with an IDE session token: 422 naming the file, and the saved work is still the submission later", async () => {
    const { candidate, attempt } = await attemptWithSavedWork();
    const session = (await (await openIdeSession(candidate, attempt.id)).json()) as { session_token: string };
    await expect422(await submit(session.session_token, attempt.id, { git_diff: "diff --git a/src/slugify.js b/src/slugify.js\n", changed_files: ["src/slugify.js"] }), [
      { loc: ["body", "git_diff"], type: "invalid_diff", msg: /the section of src\/slugify\.js changes nothing/ },
    ]);
    await expectUntouched(candidate, attempt.id);
    expect((await submit(session.session_token, attempt.id, {})).status).toBe(202);
    const frozen = ((await attemptStub(attempt.id).submittedWork()) as SubmittedWork | null)?.overlay;
    expect(frozen?.map((f) => [f.path, new TextDecoder().decode(f.content!)])).toEqual([["src/only-saved.js", "saved\n"]]);
  });

  it("a diff whose files break an overlay limit: 413 naming it", async () => {
    const { candidate, attempt } = await attemptWithSavedWork();
    const many = Array.from(
      { length: OVERLAY_LIMITS.files + 1 },
      (_, i) => `diff --git a/gen/f${i}.js b/gen/f${i}.js\nnew file mode 100644\n--- /dev/null\n+++ b/gen/f${i}.js\n@@ -0,0 +1 @@\n+x\n`,
    ).join("");
    const res = await submit(candidate.token, attempt.id, { git_diff: many });
    expect(res.status).toBe(413);
    expect(String((await errorBody(res)).detail)).toMatch(/would hold 201 files; it holds at most 200/);
    await expectUntouched(candidate, attempt.id);
  });

  it("an attempt not started is a 409 before the diff is read (a submitted one too: above)", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const res = await submit(candidate.token, attempt.id, { git_diff: "not even a diff" });
    expect(res.status).toBe(409);
    expect(String((await errorBody(res)).detail)).toMatch(/has not been started/);
  });
});
