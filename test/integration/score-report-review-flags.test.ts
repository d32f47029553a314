import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskKeys } from "../../src/domain/tasks";
import { b64, patchChanges, startedAttempt, submit } from "../support/worker/attempts";
import { call, eventually } from "../support/worker/client";
import { acceptingRunner } from "../support/worker/fake-runner";
import { callbackFor, postCallback } from "../support/worker/runner-callbacks";

// Review flags from a real scoring: the frozen overlay diffed against the task's snapshot, the
// changed source lines matched, the lines numbered. The runner is faked; the tests play its callbacks.
let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

const SOURCE = [
  'import { readFileSync, writeFileSync } from "node:fs";',
  'import { syncBuiltinESMExports } from "node:module";',
  "export function slugify(s) {",
  '  const hidden = readFileSync(new URL("../test/slugify.test.js", import.meta.url), "utf8");',
  '  writeFileSync("/output/junit.xml", forge(hidden));',
  "  syncBuiltinESMExports();",
  '  return s.toLowerCase().replace(/\\s+/g, "-");',
  "}",
  "",
].join("\n");

async function scoredReport() {
  const setup = await startedAttempt();
  await env.DB.prepare(
    `UPDATE tasks SET snapshot_sha256 = ?, test_framework = 'node-test', test_command = '["node","--test","test/"]',
       test_files = '["test/x.test.js"]', fail_to_pass = '["test/x.test.js::new"]', pass_to_pass = '[]' WHERE id = ?`,
  )
    .bind("a".repeat(64), setup.taskId)
    .run();
  await env.BUCKET.put(taskKeys(setup.taskId).testPatch, "");
  // An empty snapshot: every line of the overlay is changed.
  const emptyTar = new Blob([new Uint8Array(1024)]).stream().pipeThrough(new CompressionStream("gzip"));
  await env.BUCKET.put(taskKeys(setup.taskId).snapshot, await new Response(emptyTar).arrayBuffer());
  const saved = await patchChanges(setup.candidate, setup.attempt.id, {
    "src/slugify.js": { op: "upsert", content_b64: b64(SOURCE) },
    "test/mine.test.js": { op: "upsert", content_b64: b64('import assert from "node:assert";\nprocess.exit(0);\n') },
  });
  expect(saved.status).toBe(200);
  expect((await submit(setup.candidate.token, setup.attempt.id)).status).toBe(202);
  const row = await eventually(async () => {
    const r = await env.DB.prepare("SELECT * FROM scores WHERE attempt_id = ? ORDER BY created_at DESC LIMIT 1")
      .bind(setup.attempt.id)
      .first<{ status: string; hidden_job_id: string | null; workspace_job_id: string | null }>();
    return r?.hidden_job_id ? r : undefined;
  }, 20_000);
  const integrity = { checked_files: ["test/x.test.js"], unverified_files: [], tampered: false, reason: null, pinned_files: [] };
  const test = { name: "new", classname: "", file: "test/x.test.js", status: "passed" as const, duration_ms: 1, message: null };
  await postCallback(JSON.stringify(callbackFor(row.hidden_job_id!, { tests: [test], integrity })));
  await postCallback(JSON.stringify(callbackFor(row.workspace_job_id!)));
  await eventually(async () => {
    const r = await env.DB.prepare("SELECT status FROM scores WHERE attempt_id = ? ORDER BY created_at DESC LIMIT 1").bind(setup.attempt.id).first<{ status: string }>();
    return r?.status === "scored" ? r : undefined;
  }, 20_000);
  return setup;
}

describe("review flags in a score report", () => {
  it("staff get each flag with its file and numbered lines, and a one-line summary per kind in flags; the candidate gets neither; no score changes", async () => {
    const { attempt, candidate, interviewer } = await scoredReport();
    const staff = (await (await call(`/api/v1/attempts/${attempt.id}/score-report`, { token: interviewer.token })).json()) as {
      flags: string[];
      review_flags: { kind: string; reason: string; file: string; lines: { line: number; text: string }[]; more_lines: number }[];
      subscores: Record<string, number>;
    };
    const byKind = Object.fromEntries(staff.review_flags.map((f) => [f.kind, f]));
    expect(Object.keys(byKind).sort()).toEqual(["framework_internals", "patches_builtins", "reads_test_files", "writes_outside_workspace"]);
    expect(staff.review_flags.every((f) => f.file === "src/slugify.js")).toBe(true);
    expect(byKind.patches_builtins?.lines).toEqual([
      { line: 2, text: 'import { syncBuiltinESMExports } from "node:module";' },
      { line: 6, text: "syncBuiltinESMExports();" },
    ]);
    expect(byKind.reads_test_files?.lines).toEqual([{ line: 4, text: 'const hidden = readFileSync(new URL("../test/slugify.test.js", import.meta.url), "utf8");' }]);
    expect(byKind.writes_outside_workspace?.lines).toEqual([{ line: 5, text: 'writeFileSync("/output/junit.xml", forge(hidden));' }]);
    expect(staff.flags).toContain(
      "changed source lines patch built-in modules — replaces or reloads built-in modules: src/slugify.js (lines 2, 6) — review them (evidence, not a deduction)",
    );
    // The candidate's own test file is not code under test: its process.exit is not flagged.
    expect(staff.review_flags.some((f) => f.kind === "ends_process")).toBe(false);
    expect(staff.subscores.correctness).toBe(100);

    const own = (await (await call(`/api/v1/attempts/${attempt.id}/score-report`, { token: candidate.token })).json()) as Record<string, unknown>;
    expect(own).toMatchObject({ view: "candidate" });
    expect(own).not.toHaveProperty("review_flags");
    expect(own).not.toHaveProperty("flags");
  });
});
