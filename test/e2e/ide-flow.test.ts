import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import type { components } from "../../client/src/index";
import { ApiError, type AssayClient, createAttempt, importTask, ok, pollApi, refused, staffReport, type Task, userClient } from "../../scripts/lib/api-steps";
import { devToken } from "../support/node/http-client";

// The IDE client of the spec: after the candidate hands it an IDE session token, it works with
// that token alone ("No JWT is needed in the IDE"): start, telemetry, submit by diff.
const REPO = "assay-demo/slugify-js";
const git = (...args: string[]) => execFileSync("git", ["-C", join(inject("repohostRoot"), REPO), ...args], { encoding: "utf8" });
/** The pull request's source change as `git diff` prints it against the base: the right answer. */
const solutionDiff = () => git("diff", "refs/pull/1/base", "refs/pull/1/head", "--", "src/slugify.js");

let task: Task;
let staff: AssayClient;

async function ideClient(sub: string): Promise<{ ide: AssayClient; attemptId: string }> {
  const candidate = userClient(inject("apiUrl"), await devToken({ sub, role: "candidate" }));
  const attempt = await createAttempt(candidate, task.task_id);
  const session = await ok(candidate.POST("/api/v1/attempts/{attempt_id}/ide-session", { params: { path: { attempt_id: attempt.id } }, body: {} }));
  return { ide: userClient(inject("apiUrl"), session.session_token), attemptId: attempt.id };
}

type TelemetryEvent = components["schemas"]["TelemetryEvent"];

const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();

beforeAll(async () => {
  staff = userClient(inject("apiUrl"), await devToken({ sub: "e2e-ide-staff", role: "interviewer", org: "e2e-ide" }));
  task = await importTask(staff, `${inject("repohostUrl")}/${REPO}/pull/1`, "e2e-ide", "PUBLIC");
}, 180_000);

describe("an IDE client with its session token alone (npm start)", () => {
  it("starts, sends telemetry (once, however often re-sent; never content), submits a diff that is scored", async () => {
    const { ide, attemptId } = await ideClient(`e2e-ide-${process.pid}-1`);
    const path = { attempt_id: attemptId };
    await ok(ide.POST("/api/v1/attempts/{attempt_id}/start", { params: { path } }));

    const batch: { events: TelemetryEvent[] } = {
      events: [
        { event_id: randomUUID(), kind: "file_opened", occurred_at: at(30), file_path: "src/slugify.js" },
        { event_id: randomUUID(), kind: "focus_lost", occurred_at: at(25) },
        { event_id: randomUUID(), kind: "focus_gained", occurred_at: at(20), away_ms: 5000 },
        { event_id: randomUUID(), kind: "paste", occurred_at: at(15), size_bytes: 2400, line_count: 40 },
        { event_id: randomUUID(), kind: "typing_window", occurred_at: at(10), window_ms: 60_000, keystrokes: 240 },
      ],
    };
    expect(await ok(ide.POST("/api/v1/siem/events/batch", { body: batch }))).toMatchObject({ attempt_id: attemptId, accepted: 5 });
    // The network failed before the client saw the 202: it sends the same buffered batch again.
    expect(await ok(ide.POST("/api/v1/siem/events/batch", { body: batch }))).toMatchObject({ accepted: 5 });

    // The evaluation timeline counts telemetry per minute: the re-sent events were stored once.
    const stored = await pollApi("telemetry in D1", async () => {
      const timeline = await ok(staff.GET("/api/v1/attempts/{attempt_id}/evaluation/timeline", { params: { path, query: { limit: 100 } } }));
      const total = timeline.items.reduce((n, i) => n + (i.type === "telemetry" ? i.total : 0), 0);
      return total >= batch.events.length ? total : undefined;
    });
    expect(stored).toBe(batch.events.length);

    // Content is outside the schema (the client's types refuse it too): sent as an untyped body.
    const clipboard = { events: [{ event_id: randomUUID(), kind: "paste", occurred_at: at(5), size_bytes: 12, line_count: 1, text: "const secret = 1;" }] } as unknown as typeof batch;
    const refusal = await refused(ide.POST("/api/v1/siem/events/batch", { body: clipboard }), 422);
    expect(refusal?.detail).toContainEqual(expect.objectContaining({ loc: ["body", "events", 0, "text"] }));

    // The diff the IDE made against the base is the submission; nothing was saved through the overlay.
    await ok(
      ide.POST("/api/v1/attempts/{attempt_id}/submit", {
        params: { path },
        body: {
          git_diff: solutionDiff(),
          changed_files: ["src/slugify.js"],
          behavior_signals: { large_pastes: 0, focus_losses: 0 },
        },
      }),
    );

    const report = await staffReport(staff, attemptId);
    expect(report.subscores.correctness).toBe(100);
    // Behavior counts what the service ingested, once per event id; the client's claims sit beside it.
    expect(report.evidence.behavior).toMatchObject({
      telemetry_events: 5,
      large_pastes: 1,
      focus_losses: 1,
      claimed_signals: { large_pastes: 0, focus_losses: 0 },
    });
  });

  it("a diff that does not apply, touches a hidden test or escapes the tree is refused, and the attempt stays open", async () => {
    const { ide, attemptId } = await ideClient(`e2e-ide-${process.pid}-2`);
    const path = { attempt_id: attemptId };
    await ok(ide.POST("/api/v1/attempts/{attempt_id}/start", { params: { path } }));
    const stale = solutionDiff().replace(/^-(?!--)(.*)$/m, "-$1 // a line the base does not have");
    const hidden = git("diff", "refs/pull/1/base", "refs/pull/1/head", "--", "test/");
    const escaping = "diff --git a/../outside.js b/../outside.js\nnew file mode 100644\n--- /dev/null\n+++ b/../outside.js\n@@ -0,0 +1 @@\n+x\n";
    for (const [diff, type] of [
      [stale, "diff_does_not_apply"],
      [hidden, "hidden_test"],
      [escaping, "invalid_path"],
    ] as const) {
      const error = await ok(ide.POST("/api/v1/attempts/{attempt_id}/submit", { params: { path }, body: { git_diff: diff } })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(422);
      expect(JSON.stringify((error as ApiError).body)).toContain(type);
    }
    const attempt = await ok(staff.GET("/api/v1/attempts/{attempt_id}", { params: { path } }));
    expect(attempt.status).toBe("IN_PROGRESS");
  });
});
