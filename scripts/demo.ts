// `npm run demo`: the spec's whole flow against the stack of `npm start`, as a client drives
// it: import the demo JavaScript PR, wait for READY, invite a candidate, accept, create and
// start an attempt, save a correct solution, run the tests, submit, read the score report;
// then the same with a wrong solution. Exits 0 only if the correct solution scores
// correctness 100 and the wrong one clearly less.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { accept, type AssayClient, type CandidateScoreReport, candidateReport, createAttempt, importTask, invitationToken, invite, pollApi, runTests, save, start, submit, userClient } from "./lib/api-steps";
import { mintLocalToken } from "./lib/local-token";
import { DEV_DIR } from "./lib/paths";

const api = process.env.DEMO_API_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8787}`;
const repohost = process.env.DEMO_REPOHOST_URL ?? `http://127.0.0.1:${process.env.DEV_REPOHOST_PORT ?? 8790}`;
const outbox = process.env.DEV_MAIL_OUTBOX ?? join(DEV_DIR, "outbox");
const repos = process.env.DEV_REPOHOST_ROOT ?? join(DEV_DIR, "repos");
const ORG = "demo-org";
const DEMO_REPO = "assay-demo/slugify-js";

const step = (n: number, text: string) => console.log(`\n[${n}] ${text}`);
const info = (text: string) => console.log(`    ${text}`);

function solutionFile(path: string): string {
  return execFileSync("git", ["-C", join(repos, DEMO_REPO), "show", `refs/pull/1/head:${path}`], { encoding: "utf8" });
}

// Ignores maxLength: the existing tests still pass, the new ones do not.
const WRONG_SOLUTION = `export function slugify(input, options = {}) {
  const { separator = "-", lowercase = true } = options;
  if (typeof input !== "string") throw new TypeError("slugify expects a string");
  const slug = input.normalize("NFKD").replace(/[\\u0300-\\u036f]/g, "").split(/[^A-Za-z0-9]+/).filter(Boolean).join(separator);
  return lowercase ? slug.toLowerCase() : slug;
}
`;

async function candidateRound(
  n: number,
  staff: AssayClient,
  taskId: string,
  who: { sub: string; email: string },
  solution: string,
  label: string,
): Promise<CandidateScoreReport> {
  step(n, `${label}: invite ${who.email}`);
  const invitation = await invite(staff, taskId, who.email);
  info(`invitation ${invitation.invite_id}; waiting for the e-mail in ${outbox}`);
  const token = await pollApi("invitation e-mail", async () => invitationToken(outbox, who.email), 60_000);
  const candidate = userClient(api, await mintLocalToken({ sub: who.sub, email: who.email, role: "candidate" }));
  await accept(candidate, token);
  info("accepted: the candidate joined the organization with the task assigned");

  step(n + 1, `${label}: create and start an attempt, save the work, run the tests`);
  const attempt = await createAttempt(candidate, taskId);
  await start(candidate, attempt.id);
  info(`attempt ${attempt.id} IN_PROGRESS`);
  await save(candidate, attempt.id, { "src/slugify.js": solution });
  const run = await runTests(candidate, attempt.id, ["src/slugify.js"]);
  info(`run ${run.id}: ${run.status}, ${run.counts?.passed}/${run.counts?.total} tests passed (the hidden tests are not in it)`);

  step(n + 2, `${label}: submit and poll the score report`);
  await submit(candidate, attempt.id, {
    tests_passed: run.counts?.passed ?? 0,
    tests_total: run.counts?.total ?? 0,
    behavior_signals: {},
    changed_files: ["src/slugify.js"],
    explanation:
      "Added a maxLength option to slugify because long titles made unusable URLs. It keeps whole words so that " +
      "slugs stay readable, cuts a first word that is longer than the limit, and I tested the edge case of a " +
      "trailing separator with the existing test suite.",
  });
  const report = await candidateReport(candidate, attempt.id);
  info(`overall ${report.overall_score}; ${Object.entries(report.subscores).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  return report;
}

async function main(): Promise<void> {
  step(1, `import ${repohost}/${DEMO_REPO}/pull/1 and wait for READY`);
  const staff = userClient(api, await mintLocalToken({ sub: "demo-interviewer", email: "interviewer@example.com", role: "interviewer", org: ORG }));
  const task = await importTask(staff, `${repohost}/${DEMO_REPO}/pull/1`, ORG);
  info(`task ${task.task_id} READY: "${task.title}", ${task.fail_to_pass?.length} FAIL_TO_PASS tests`);

  const good = await candidateRound(2, staff, task.task_id, { sub: "demo-candidate-ada", email: "ada@example.com" }, solutionFile("src/slugify.js"), "correct solution");
  const bad = await candidateRound(5, staff, task.task_id, { sub: "demo-candidate-bob", email: "bob@example.com" }, WRONG_SOLUTION, "wrong solution");

  step(8, "verdict");
  const ok = good.subscores.correctness === 100 && (bad.subscores.correctness ?? 100) <= 50;
  info(`correct solution: correctness ${good.subscores.correctness}; wrong solution: correctness ${bad.subscores.correctness}`);
  info(ok ? "OK: the correct solution scores 100 and the wrong one clearly less" : "NOT OK");
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(`demo failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
