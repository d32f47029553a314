import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskKeys } from "../../src/domain/tasks";
import { call, eventually } from "../support/worker/client";
import { assign, b64, createAttempt, patchChanges, signIn, submit, type TestUser } from "../support/worker/attempts";
import { acceptingRunner } from "../support/worker/fake-runner";
import { callbackFor, postCallback } from "../support/worker/runner-callbacks";
import { snapshotTarball } from "../support/worker/tarball";
import { insertReadyTask } from "../support/worker/tasks";

// The sandbox runner is the one outside party faked: it accepts every job; the tests play its callbacks.
let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

const BASE = 'export function formatReport(text) {\n  throw new Error("not implemented");\n}\n';

// The pull request's fix: what the solution patch makes of the base.
const UPSTREAM = `export function formatReport(text) {
  const totals = new Map();
  for (const raw of text.split("\\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [sku, qty, price] = line.split(",");
    const current = totals.get(sku) ?? { sku, qty: 0, value: 0 };
    current.qty += Number(qty);
    current.value += Number(qty) * Number(price);
    totals.set(sku, current);
  }
  const sorted = [...totals.values()].sort((a, b) => b.value - a.value || a.sku.localeCompare(b.sku));
  return sorted.map((t) => t.sku.padEnd(10) + String(t.qty).padStart(6) + t.value.toFixed(2).padStart(12)).join("\\n");
}
`;

/** The upstream fix with other names and another layout: what a candidate who copied it submits. */
const renamed = (names: [string, string][]) => names.reduce((text, [from, to]) => text.replaceAll(from, to), UPSTREAM).replaceAll(";\n", "\n");
const SUBMISSION_A = renamed([["totals", "bySku"], ["raw", "row"], ["current", "entry"], ["sorted", "ranked"]]);
// B copies A with its own names: the pair to find.
const SUBMISSION_B = renamed([["totals", "acc"], ["raw", "l"], ["current", "cur"], ["sorted", "out"], ["(t)", "(x)"], ["t.", "x."]]);

const replaceAll = (from: string, to: string) => {
  const lines = (s: string) => s.slice(0, -1).split("\n");
  const before = lines(from);
  const after = lines(to);
  return `@@ -1,${before.length} +1,${after.length} @@\n${before.map((l) => `-${l}`).join("\n")}\n${after.map((l) => `+${l}`).join("\n")}\n`;
};
const SOLUTION_PATCH = `diff --git a/src/report.js b/src/report.js\n--- a/src/report.js\n+++ b/src/report.js\n${replaceAll(BASE, UPSTREAM)}`;
const TEST_PATCH = "diff --git a/test/report.test.js b/test/report.test.js\n--- a/test/report.test.js\n+++ b/test/report.test.js\n@@ -1 +1 @@\n-a\n+b\n";

/** An organization with an interviewer and a task imported from the same pull request as every other's here. */
async function organization() {
  const orgId = `org-${crypto.randomUUID().slice(0, 8)}`;
  const interviewer = await signIn({ role: "interviewer", org_id: orgId });
  const task = await insertReadyTask(orgId, {
    createdBy: interviewer.id,
    failToPass: ["test/report.test.js::report::sorts"],
    passToPass: ["test/report.test.js::report::parses"],
    testFiles: ["test/report.test.js"],
  });
  await Promise.all([
    env.BUCKET.put(taskKeys(task.id).snapshot, await snapshotTarball({ "src/report.js": BASE, "test/report.test.js": "a\n" })),
    env.BUCKET.put(taskKeys(task.id).solutionPatch, SOLUTION_PATCH),
    env.BUCKET.put(taskKeys(task.id).testPatch, TEST_PATCH),
  ]);
  return { orgId, interviewer, taskId: task.id };
}

/** A candidate's started attempt on the task, with `source` saved as src/report.js and a test of their own. */
async function workingAttempt(taskId: string, source: string) {
  const candidate = await signIn();
  await assign(taskId, candidate);
  const { id } = await createAttempt(candidate, taskId);
  expect((await call(`/api/v1/attempts/${id}/start`, { method: "POST", token: candidate.token })).status).toBe(200);
  const saved = await patchChanges(candidate, id, {
    "src/report.js": { op: "upsert", content_b64: b64(source) },
    // Tests are not compared: this one is the same in every attempt.
    "test/mine.test.js": { op: "upsert", content_b64: b64("import { formatReport } from '../src/report.js';\nformatReport('a,1,2');\n") },
  });
  expect(saved.status).toBe(200);
  return { candidate, attemptId: id };
}

interface Region {
  left: { path: string; start_line: number; end_line: number; text: string };
  right: { path: string; start_line: number; end_line: number; text: string };
}
interface Similarity {
  status: string;
  upstream: { similarity: number; regions: Region[] } | null;
  upstream_missing: string | null;
  peers: { attempt_id: string; candidate: { id: string; email: string | null }; similarity: number; regions: Region[] }[];
}

const similarityOf = (attemptId: string, token?: string) => call(`/api/v1/attempts/${attemptId}/evaluation/similarity`, { token });

async function readySimilarity(attemptId: string, staff: TestUser): Promise<Similarity> {
  return eventually(async () => {
    const res = await similarityOf(attemptId, staff.token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Similarity;
    return body.status === "ready" ? body : undefined;
  }, 20_000);
}

/** Plays the runner's callbacks of the attempt's scoring with every hidden test passing; answers the staff's report. */
async function scored(attemptId: string, staff: TestUser): Promise<Record<string, unknown>> {
  const jobs = await eventually(
    async () =>
      (await env.DB.prepare("SELECT hidden_job_id, workspace_job_id FROM scores WHERE attempt_id = ? AND hidden_job_id IS NOT NULL").bind(attemptId).first<{ hidden_job_id: string; workspace_job_id: string }>()) ?? undefined,
    20_000,
  );
  const test = (name: string) => ({ name, classname: "report", file: "test/report.test.js", status: "passed" as const, duration_ms: 1, message: null });
  await postCallback(JSON.stringify(callbackFor(jobs.hidden_job_id, { tests: [test("sorts"), test("parses")] })));
  await postCallback(JSON.stringify(callbackFor(jobs.workspace_job_id)));
  return eventually(async () => {
    const res = await call(`/api/v1/attempts/${attemptId}/score-report`, { token: staff.token });
    return res.status === 200 ? ((await res.json()) as Record<string, unknown>) : undefined;
  }, 20_000);
}

describe("similarity (real queues, D1, R2 and AttemptDOs; the runner faked)", () => {
  let one: Awaited<ReturnType<typeof organization>>;
  let other: Awaited<ReturnType<typeof organization>>;
  let a: Awaited<ReturnType<typeof workingAttempt>>;
  let b: Awaited<ReturnType<typeof workingAttempt>>;
  let elsewhere: Awaited<ReturnType<typeof workingAttempt>>;

  beforeAll(async () => {
    [one, other] = await Promise.all([organization(), organization()]);
    // A candidate of another organization submits exactly what A does, on a task from the same pull request.
    [a, b, elsewhere] = await Promise.all([workingAttempt(one.taskId, SUBMISSION_A), workingAttempt(one.taskId, SUBMISSION_B), workingAttempt(other.taskId, SUBMISSION_A)]);
  }, 30_000);

  it("compares each submission with the upstream fix and, once a renamed copy is submitted, shows the pair on both attempts; the score report is unchanged", async () => {
    expect((await similarityOf(a.attemptId, one.interviewer.token)).status).toBe(409);
    expect((await submit(a.candidate.token, a.attemptId)).status).toBe(202);
    const first = await readySimilarity(a.attemptId, one.interviewer);
    expect(first.peers).toEqual([]);
    expect(first.upstream!.similarity).toBeGreaterThanOrEqual(0.8);
    const [upstreamRegion] = first.upstream!.regions;
    expect(upstreamRegion!.left).toMatchObject({ path: "src/report.js", start_line: 1, end_line: 14 });
    expect(upstreamRegion!.right).toMatchObject({ path: "src/report.js", start_line: 1, end_line: 14 });
    expect(upstreamRegion!.left.text).toContain("bySku");
    expect(upstreamRegion!.right.text).toContain("totals");
    const report = await scored(a.attemptId, one.interviewer);

    expect((await submit(b.candidate.token, b.attemptId)).status).toBe(202);
    expect((await submit(elsewhere.candidate.token, elsewhere.attemptId)).status).toBe(202);
    const fromB = await readySimilarity(b.attemptId, one.interviewer);
    expect(fromB.peers.map((p) => [p.attempt_id, p.candidate.id])).toEqual([[a.attemptId, a.candidate.id]]);
    expect(fromB.peers[0]!.similarity).toBeGreaterThanOrEqual(0.8);
    expect(fromB.peers[0]!.regions[0]!.left.text).toContain("acc.get");
    expect(fromB.peers[0]!.regions[0]!.right.text).toContain("bySku.get");
    // Symmetric: A, compared before B was submitted, now shows B, seen from A's side.
    const fromA = (await (await similarityOf(a.attemptId, one.interviewer.token)).json()) as Similarity;
    expect(fromA.peers.map((p) => [p.attempt_id, p.candidate.id, p.similarity])).toEqual([[b.attemptId, b.candidate.id, fromB.peers[0]!.similarity]]);
    expect(fromA.peers[0]!.regions[0]!.left.text).toContain("bySku.get");

    // Evidence, never a deduction: A's report is as it was, and B, the copy, scores what A scores.
    expect(await (await call(`/api/v1/attempts/${a.attemptId}/score-report`, { token: one.interviewer.token })).json()).toEqual(report);
    expect(JSON.stringify(report)).not.toMatch(/similar/i);
    const copied = await scored(b.attemptId, one.interviewer);
    expect([copied.overall_score, copied.subscores]).toEqual([report.overall_score, report.subscores]);
  });

  it("never compares across organizations: the identical submission in another organization is no one's peer", async () => {
    const theirs = await readySimilarity(elsewhere.attemptId, other.interviewer);
    expect(theirs.peers).toEqual([]);
    expect(theirs.upstream!.similarity).toBeGreaterThanOrEqual(0.8);
    const ours = (await (await similarityOf(a.attemptId, one.interviewer.token)).json()) as Similarity;
    expect(ours.peers.map((p) => p.attempt_id)).not.toContain(elsewhere.attemptId);
    const crossing = await env.DB.prepare("SELECT count(*) AS n FROM similarity_pairs WHERE attempt_a = ? OR attempt_b = ?").bind(elsewhere.attemptId, elsewhere.attemptId).first<{ n: number }>();
    expect(crossing?.n).toBe(0);
  });

  it("is for the organization's staff only: 401 without a token, 403 for candidates, 404 for other staff and for no such attempt", async () => {
    expect((await similarityOf(a.attemptId)).status).toBe(401);
    // As every evaluation route: a candidate-role token is refused before the attempt is looked up, its own or not.
    expect((await similarityOf(a.attemptId, a.candidate.token)).status).toBe(403);
    expect((await similarityOf(a.attemptId, b.candidate.token)).status).toBe(403);
    expect((await similarityOf(a.attemptId, other.interviewer.token)).status).toBe(404);
    expect((await similarityOf("att_nosuchattempt", one.interviewer.token)).status).toBe(404);
    expect((await similarityOf("not%20an%20id", one.interviewer.token)).status).toBe(422);
    const doc = (await (await call("/api/v1/openapi.json")).json()) as { paths: Record<string, { get?: { responses: Record<string, unknown> } }> };
    const documented = doc.paths["/api/v1/attempts/{attempt_id}/evaluation/similarity"]?.get?.responses ?? {};
    expect(Object.keys(documented)).toEqual(expect.arrayContaining(["200", "401", "403", "404", "409", "422"]));
  });
});
