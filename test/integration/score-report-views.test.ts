import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assignedTask, createAttempt } from "../support/worker/attempts";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";

const HIDDEN_NAMES = ["test/secret_slug.test.js::slugify::cuts at the last whole word", "test/secret_slug.test.js::slugify::keeps emoji"];

/** A report as scoring stores it, with everything a reviewer may need: hidden test ids, files and reasons included. */
function storedReport(scoreId: string, attemptId: string, taskId: string) {
  return {
    score_id: scoreId,
    attempt_id: attemptId,
    task_id: taskId,
    rubric_version: "assay-rubric-1",
    overall_score: 41.5,
    subscores: { correctness: 20, code_quality: 90, test_coverage: 50, behavior: 70, communication: 40 },
    weights: { correctness: 0.5, test_coverage: 0.15, code_quality: 0.15, behavior: 0.1, communication: 0.1 },
    evidence: {
      correctness: {
        run_status: "SUCCEEDED",
        fail_to_pass: { passed: 0, total: 1, failing: [HIDDEN_NAMES[0]] },
        pass_to_pass: { passed: 1, total: 2, failing: [HIDDEN_NAMES[1]] },
        tampered: true,
        reason: "a canary in test/secret_slug.test.js passed that must fail",
        unverified_files: ["test/secret_slug.test.js"],
        discarded_files: ["test/secret_slug.test.js"],
        canaries: { "test/secret_slug.test.js": ["canary 1234"] },
      },
      test_coverage: { changed_executable_lines: 4, covered_lines: 2, files: [{ file: "src/slugify.js", changed_executable_lines: 4, covered_lines: 2, loaded_by_tests: true }] },
      code_quality: { linted: true, lint_errors: 0, lint_warnings: 0, findings: [], deductions: { lint_errors: 0 }, hidden_patch_lines: ["+ assert.equal(slugify(x), 'y')"] },
      behavior: { runs: 2, parts: { testing: 40, time: 30, integrity: 0 }, reviewer_note: "pasted test/secret_slug.test.js" },
      communication: { explanation_words: 12, explains: 1, changed_source_lines: 4, comment_lines: 0, parts: { written: 30, commented: 0 } },
    },
    claims: [{ figure: "tests", claimed: 1, measured: 0.5, gap: 0.5, flagged: true, note: "secret_slug" }],
    flags: ["edits to the task's test files were not scored: test/secret_slug.test.js"],
    review_flags: REVIEW_FLAGS,
    ignored_test_edits: ["test/secret_slug.test.js"],
    excluded_from_hidden_run: ["test/secret_slug.test.js"],
  };
}

/** Staff-only evidence: lines of the candidate's code that read the hidden test file. */
const REVIEW_FLAGS = [
  {
    kind: "reads_test_files",
    reason: "Reads, lists or imports test files at run time.",
    file: "src/slugify.js",
    lines: [{ line: 4, text: 'const src = readFileSync("test/secret_slug.test.js", "utf8");' }],
    more_lines: 0,
  },
];

async function scoredAttempt() {
  const setup = await assignedTask();
  const attempt = await createAttempt(setup.candidate, setup.taskId);
  const scoreId = `scr_${crypto.randomUUID().replaceAll("-", "")}`;
  await env.DB.prepare("INSERT INTO scores (id, attempt_id, status, rubric_version, overall_score, report, completed_at) VALUES (?, ?, 'scored', 'assay-rubric-1', 41.5, ?, ?)")
    .bind(scoreId, attempt.id, JSON.stringify(storedReport(scoreId, attempt.id, setup.taskId)), new Date().toISOString())
    .run();
  return { ...setup, attemptId: attempt.id, scoreId };
}

describe("what a candidate sees of scoring", () => {
  it("the candidate's report has scores and counts, never hidden test names, files or reasons; staff see all", async () => {
    const { candidate, interviewer, attemptId, scoreId, taskId } = await scoredAttempt();
    const res = await call(`/api/v1/attempts/${attemptId}/score-report`, { token: candidate.token });
    expect(res.status).toBe(200);
    const text = await res.text();
    const report = JSON.parse(text) as Record<string, unknown>;
    expect(report).toMatchObject({
      view: "candidate",
      score_id: scoreId,
      attempt_id: attemptId,
      task_id: taskId,
      overall_score: 41.5,
      subscores: { correctness: 20, code_quality: 90, test_coverage: 50, behavior: 70, communication: 40 },
      weights: { correctness: 0.5 },
      claims: [{ figure: "tests", claimed: 1, measured: 0.5, gap: 0.5, flagged: true }],
      evidence: {
        test_coverage: { changed_executable_lines: 4, covered_lines: 2 },
        behavior: { runs: 2, parts: { testing: 40, time: 30, integrity: 0 } },
        communication: { explanation_words: 12 },
      },
    });
    expect((report.evidence as Record<string, unknown>).correctness).toEqual({
      run_status: "SUCCEEDED",
      fail_to_pass: { passed: 0, total: 1 },
      pass_to_pass: { passed: 1, total: 2 },
      tampered: true,
    });
    for (const key of ["flags", "review_flags", "ignored_test_edits", "excluded_from_hidden_run"]) expect(report).not.toHaveProperty(key);
    for (const leak of ["secret_slug", "cuts at the last whole word", "keeps emoji", "canary", "failing", "assert.equal", "reviewer_note", "readFileSync"]) {
      expect(text).not.toContain(leak);
    }

    const staff = (await (await call(`/api/v1/attempts/${attemptId}/score-report`, { token: interviewer.token })).json()) as Record<string, unknown>;
    expect(staff).toMatchObject({
      view: "staff",
      flags: ["edits to the task's test files were not scored: test/secret_slug.test.js"],
      review_flags: REVIEW_FLAGS,
      ignored_test_edits: ["test/secret_slug.test.js"],
      excluded_from_hidden_run: ["test/secret_slug.test.js"],
      evidence: { correctness: { fail_to_pass: { failing: [HIDDEN_NAMES[0]] }, pass_to_pass: { failing: [HIDDEN_NAMES[1]] }, discarded_files: ["test/secret_slug.test.js"] } },
    });
  });

  it("a platform admin is staff everywhere; another user gets a 404", async () => {
    const { attemptId } = await scoredAttempt();
    const admin = await sessionToken({ sub: uniqueSubject("admin"), role: "admin" });
    expect(((await (await call(`/api/v1/attempts/${attemptId}/score-report`, { token: admin })).json()) as { view: string }).view).toBe("staff");
    const other = await sessionToken({ sub: uniqueSubject() });
    expect((await call(`/api/v1/attempts/${attemptId}/score-report`, { token: other })).status).toBe(404);
  });

  it("scoring's failure reason reaches staff; the candidate reads a general sentence", async () => {
    const { candidate, interviewer, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const reason = "Scoring failed after 3 tries because the sandbox runner could not run it: test.files[0] test/secret_slug.test.js refused";
    await env.DB.prepare("INSERT INTO scores (id, attempt_id, status, rubric_version, reason, completed_at) VALUES (?, ?, 'failed', 'assay-rubric-1', ?, ?)")
      .bind(`scr_${crypto.randomUUID().replaceAll("-", "")}`, attempt.id, reason, new Date().toISOString())
      .run();

    const mine = await call(`/api/v1/attempts/${attempt.id}`, { token: candidate.token });
    expect(((await mine.json()) as { scoring: unknown }).scoring).toEqual({
      status: "failed",
      reason: "Scoring could not be completed; the organization's staff can re-score the attempt",
      score_id: null,
    });
    const report = await call(`/api/v1/attempts/${attempt.id}/score-report`, { token: candidate.token });
    expect(report.status).toBe(404);
    expect(String((await errorBody(report)).detail)).not.toContain("secret_slug");

    const staff = await call(`/api/v1/attempts/${attempt.id}`, { token: interviewer.token });
    expect(((await staff.json()) as { scoring: { reason: string } }).scoring.reason).toBe(reason);
    const staffReport = await call(`/api/v1/attempts/${attempt.id}/score-report`, { token: interviewer.token });
    expect(String((await errorBody(staffReport)).detail)).toContain("secret_slug");
  });

  it("the OpenAPI document describes both views of the report", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: unknown }> }> }>>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const schema = JSON.stringify(doc.paths["/api/v1/attempts/{attempt_id}/score-report"]?.get?.responses["200"]?.content["application/json"]?.schema);
    expect(schema).toContain("#/components/schemas/ScoreReport");
    expect(schema).toContain("#/components/schemas/CandidateScoreReport");
    expect(Object.keys(doc.components.schemas.CandidateScoreReport?.properties ?? {})).not.toContain("flags");
    expect(Object.keys(doc.components.schemas.CandidateScoreReport?.properties ?? {})).not.toContain("review_flags");
    expect(JSON.stringify(doc.components.schemas.ScoreReport?.properties?.review_flags)).toContain("#/components/schemas/ReviewFlag");
    expect(Object.keys(doc.components.schemas.ReviewFlag?.properties ?? {}).sort()).toEqual(["file", "kind", "lines", "more_lines", "reason"]);
  });
});
