import { describe, expect, inject, it } from "vitest";
import { accept, type AssayClient, candidateReport, createAttempt, invitationToken, invite, ok, pollApi, refused, save, start, submit, userClient } from "../../scripts/lib/api-steps";
import { slugifyDemo } from "../../scripts/dev-repohost/demo/slugify-js";
import { addIssue, addPullRequest, createRepo, issueUrl, pullRequestUrl, updatePullRequest } from "../../scripts/dev-repohost/repo-builder";
import { devToken } from "../support/node/http-client";

const ORG = "e2e-drafts";

async function settled(staff: AssayClient, draftId: string) {
  return pollApi(`draft ${draftId}`, async () => {
    const draft = await ok(staff.GET("/api/v1/task-drafts/{draft_id}", { params: { path: { draft_id: draftId } } }));
    return draft.status === "VALIDATED" || draft.status === "FAILED" ? draft : undefined;
  });
}

describe("the task builder, end to end (a local issue and pull request, the real runner)", () => {
  it("draft → fails → the PR changes → validated → published → invited → attempted → scored", { timeout: 600_000 }, async () => {
    // A repository of this test's own on the stack's repo host: the slugify demo, its issue, and a
    // first version of the pull request that changes no tests, so it cannot be validated.
    const demo = slugifyDemo("e2e-drafts", `slugify-${process.pid}`);
    const [change] = demo.pulls;
    if (!change?.changes) throw new Error("the slugify demo has no pull request");
    const repo = await createRepo({ root: inject("repohostRoot"), owner: demo.owner, name: demo.name, files: demo.files });
    const { number: issueNumber } = await addIssue(repo, { ...demo.issues![0]!, number: undefined });
    const pr = await addPullRequest(repo, { title: change.title, body: change.body, changes: { "src/slugify.js": change.changes["src/slugify.js"]! } });
    const host = inject("repohostUrl");

    const staff = userClient(inject("apiUrl"), await devToken({ sub: "e2e-drafts-staff", role: "interviewer", org: ORG }));
    const made = await ok(
      staff.POST("/api/v1/task-drafts", {
        body: {
          issue_url: issueUrl(host, repo, issueNumber),
          pr_url: pullRequestUrl(host, repo, pr.number),
          organization_id: ORG,
          tags: ["builder"],
        },
      }),
    );
    const failed = await settled(staff, made.draft_id);
    expect(failed.status).toBe("FAILED");
    expect(failed.failure_reason).toMatch(/test/i);
    await refused(staff.POST("/api/v1/tasks", { body: { draft_id: made.draft_id } }), 409);

    // The pull request gets its tests; validating again reads the new head.
    await updatePullRequest(repo, pr.number, { title: change.title, body: change.body, changes: change.changes });
    await ok(staff.POST("/api/v1/task-drafts/{draft_id}/validate", { params: { path: { draft_id: made.draft_id } } }));
    const validated = await settled(staff, made.draft_id);
    expect(validated.status).toBe("VALIDATED");
    expect(validated.validation.fail_to_pass).toHaveLength(4);
    expect(validated.validation.pass_to_pass).toHaveLength(7);
    expect(validated.statement?.title).toBe("Slugs of long titles are too long for URLs");
    expect(validated.statement?.body).not.toMatch(/3f2a9c1|https?:|@ada/);

    const task = await ok(staff.POST("/api/v1/tasks", { body: { draft_id: made.draft_id } }));
    expect(task).toMatchObject({ task_id: made.draft_id, status: "READY" });

    const email = `e2e-drafts-${process.pid}@example.com`;
    await invite(staff, task.task_id, email);
    const token = await pollApi("the invitation e-mail", () => invitationToken(inject("outboxDir"), email), 60_000);
    const candidate = userClient(inject("apiUrl"), await devToken({ sub: `e2e-drafts-candidate-${process.pid}`, email, role: "candidate" }));
    await accept(candidate, token);

    // The candidate reads the issue's problem, never the pull request that solves it.
    const seen = await ok(candidate.GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: task.task_id } } }));
    expect(seen).toMatchObject({ statement: validated.statement });
    expect(JSON.stringify(seen)).not.toMatch(/maxLength|pull|joinWithin/);

    const attempt = await createAttempt(candidate, task.task_id);
    await start(candidate, attempt.id);
    await save(candidate, attempt.id, { "src/slugify.js": String(change.changes["src/slugify.js"]) });
    await submit(candidate, attempt.id, { explanation: "Keeps whole words within maxLength so slugs stay short." });
    const report = await candidateReport(candidate, attempt.id);
    expect(report.subscores.correctness).toBe(100);
    expect(report.evidence.correctness).toMatchObject({ fail_to_pass: { passed: 4, total: 4 }, pass_to_pass: { passed: 7, total: 7 } });
  });
});
