// Pull requests of repositories shaped like real projects (scripts/dev-repohost/fixtures/):
// each is imported through the API and must reach READY with exactly the FAIL_TO_PASS and
// PASS_TO_PASS ids its fixture.json records, as verified by running the project's own tools
// outside Assay. What only this suite proves: the real install (npm, pnpm, yarn, pip) inside
// the sandbox, the real framework run there, and its real report turned into test ids.
// Detection rules, report parsing and id building have unit tests of their own.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { FIXTURES_DIR, fixtureSpecs, type FixtureSpec } from "../../scripts/dev-repohost/demo/fixture-repos";
import { type AssayClient, createAttempt, ok, save, scoreReport, start, submit, type Task, userClient } from "../../scripts/lib/api-steps";
import { poll } from "../../scripts/lib/wait";
import { classifyPath } from "../../src/domain/patch-rules";
import { devToken } from "../support/node/http-client";

const ORG = "e2e-real-repos";
/** Every fixture is imported at once, so the slowest install (jest, ava) bounds the wait, not their sum. */
const SETTLE_MS = 12 * 60_000;
/**
 * A fixture is scored end to end when its fixture.json says so: once per language (npm +
 * jest, pip + a src/ layout), and every layout whose runs differ from the plain one (a build,
 * a workspace package's folder, another Node). Each framework's hidden-test run with canaries
 * is the runner tests' (framework-canaries.test.ts).
 */

/** REAL_REPOS=name,name runs only those fixtures (while working on one); CI runs them all. */
const only = process.env.REAL_REPOS?.split(",").map((n) => n.trim()).filter(Boolean);
const fixtures = fixtureSpecs().filter((f) => !only || only.includes(f.name));
const SCORED = fixtures.filter((f) => f.scored === true);
const settled = new Map<string, Promise<Task>>();
let staffToken: string;

async function importAndSettle(fixture: FixtureSpec): Promise<Task> {
  // A client (and so a client IP) per fixture: thirteen pollers behind one address would hit the burst limit.
  const staff = userClient(inject("apiUrl"), staffToken);
  const created = await ok(
    staff.POST("/api/v1/tasks/import-pr", {
      body: {
        pr_url: `${inject("repohostUrl")}/${fixture.repo}/pull/${fixture.pull.number}`,
        // Public, so the scored fixtures' candidates can attempt them without invitations.
        visibility: "PUBLIC",
        organization_id: ORG,
        tags: ["e2e", "real-repo"],
      },
    }),
  );
  // Up to 10 s apart: the imports take minutes, and twenty-two pollers 4 s apart sent the stack
  // they wait on about 1,400 requests meanwhile, each served on the cores the imports need.
  return poll(
    `${fixture.repo} (task ${created.task_id})`,
    async () => {
      const task = await ok(staff.GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: created.task_id } } }));
      return task.status === "READY" || task.status === "FAILED" ? task : undefined;
    },
    { timeoutMs: SETTLE_MS, intervalMs: 1000, maxIntervalMs: 10_000 },
  );
}

/** The pull request's source files as they are at its head: what a candidate with the right answer saves. */
function goldFiles(fixture: FixtureSpec): Record<string, string> {
  const head = path.join(FIXTURES_DIR, fixture.name, "head");
  const files: Record<string, string> = {};
  for (const entry of readdirSync(head, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const relative = path.relative(head, full).split(path.sep).join("/");
    if (classifyPath(relative) === "source") files[relative] = readFileSync(full, "utf8");
  }
  return files;
}

async function candidate(n: string): Promise<AssayClient> {
  return userClient(inject("apiUrl"), await devToken({ sub: `e2e-real-repos-${process.pid}-${n}`, role: "candidate" }));
}

async function scored(taskId: string, who: string, files: Record<string, string>) {
  const client = await candidate(who);
  const attempt = await createAttempt(client, taskId);
  await start(client, attempt.id);
  if (Object.keys(files).length > 0) await save(client, attempt.id, files);
  await submit(client, attempt.id, {});
  return scoreReport(client, attempt.id, SETTLE_MS);
}

beforeAll(async () => {
  staffToken = await devToken({ sub: "e2e-real-repos-staff", role: "interviewer", org: ORG });
  for (const fixture of fixtures) {
    const task = importAndSettle(fixture);
    // Awaited by the fixture's own test; a rejection there is that test's failure, not an unhandled one here.
    task.catch(() => undefined);
    settled.set(fixture.name, task);
  }
});

// Concurrent: the imports are already under way (beforeAll), and the scored fixtures' candidates
// are independent; one after another they waited on each other's runs for a minute.
describe.concurrent("real-project pull requests end to end (dev repo host, real runner, real installs)", () => {
  it.each(fixtures.map((f) => [f.name, f.framework, f.lockfile ?? "no lockfile", f] as const))(
    "%s (%s, %s) is READY with the verified FAIL_TO_PASS and PASS_TO_PASS ids",
    async (name, framework, _lockfile, fixture) => {
      const task = await settled.get(name)!;
      expect({ status: task.status, reason: task.failure_reason }).toEqual({ status: "READY", reason: null });
      expect(task.test_framework).toBe(framework);
      expect(task.language).toMatch(fixture.language === "python" ? /^python$/ : /^(javascript|typescript)$/);
      expect(task.fail_to_pass).toEqual(fixture.expected.fail_to_pass);
      expect(task.pass_to_pass).toEqual(fixture.expected.pass_to_pass);
    },
    SETTLE_MS + 60_000,
  );

  describe.each(SCORED)("$name: scoring with its real framework", (fixture) => {
    it(
      "the pull request's own change scores correctness 100; no change keeps only the PASS_TO_PASS share",
      async () => {
        const task = await settled.get(fixture.name)!;
        expect(task.status).toBe("READY");
        const failToPass = fixture.expected.fail_to_pass.length;
        const passToPass = fixture.expected.pass_to_pass.length;
        const [gold, empty] = await Promise.all([scored(task.task_id, `${fixture.name}-gold`, goldFiles(fixture)), scored(task.task_id, `${fixture.name}-empty`, {})]);
        expect(gold.subscores.correctness).toBe(100);
        expect(gold.evidence.correctness).toMatchObject({ fail_to_pass: { passed: failToPass, total: failToPass }, pass_to_pass: { passed: passToPass, total: passToPass } });
        expect(empty.evidence.correctness).toMatchObject({ fail_to_pass: { passed: 0, total: failToPass }, pass_to_pass: { passed: passToPass, total: passToPass } });
        expect(empty.subscores.correctness).toBe(passToPass > 0 ? 20 : 0);
      },
      2 * SETTLE_MS,
    );
  });
});
