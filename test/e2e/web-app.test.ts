import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, onTestFailed } from "vitest";
import type { OutboxRecord } from "../../src/domain/outbox";
import { poll } from "../../scripts/lib/wait";
import { signInAtDevProvider, type DevUser } from "../../scripts/lib/browser";
import { launchChromium, seriousViolations, userContext } from "../support/node/browser";
import { api, devToken } from "../support/node/http-client";
import { expireInvitation } from "../support/node/local-d1";

// The web app in Chromium against the real stack (npm start): an interviewer imports the demo
// pull request and invites a candidate; the candidate follows the e-mail's link, signs in at the
// dev OpenID provider, edits, runs the tests (a failing, then a passing test), uses the terminal
// and the assistant, and submits; the interviewer reads the report, replays the timeline and
// finds the attempt in analytics. Then the error paths a user meets. axe-core checks each page.
const ORG = `e2e-web-${process.pid}`;
const REPO = "assay-demo/slugify-js";
const INTERVIEWER = { email: `ada-${process.pid}@example.test`, role: "interviewer", org: ORG };
const CANDIDATE = { email: `cy-${process.pid}@example.test`, role: "candidate", sub: `e2e-web-cy-${process.pid}` };
const LATE = { email: `late-${process.pid}@example.test`, role: "candidate" };
/** src/slugify.js of the demo pull request: at its base (what the candidate starts from), at its head (the answer). */
const slugifyAt = (ref: "base" | "head") => execFileSync("git", ["-C", join(inject("repohostRoot"), REPO), "show", `refs/pull/1/${ref}:src/slugify.js`], { encoding: "utf8" });
const STEP_MS = 60_000;
const EXPLANATION = "Cut at the last whole word within maxLength; tested with titles of emoji only.";

/** The dev OpenID provider's sign-in page (checked by axe first), filled in as a person would. */
async function signIn(page: Page, who: DevUser): Promise<void> {
  await page.waitForURL((url) => url.origin === inject("idpUrl") && url.pathname.startsWith("/interaction/"), { timeout: STEP_MS });
  expect(await seriousViolations(page)).toEqual([]);
  await signInAtDevProvider(page, inject("idpUrl"), who, STEP_MS);
}

/** A session of the organization's staff, for what the test reads or sets through the API. */
const staffToken = () => devToken({ sub: `e2e-web-staff-${process.pid}`, role: "interviewer", org: ORG });

/** The page's serious accessibility violations once it has settled: none expected. */
async function accessible(page: Page): Promise<void> {
  await page.locator("main[aria-busy='true'], .state.loading").first().waitFor({ state: "detached", timeout: STEP_MS }).catch(() => undefined);
  expect(await seriousViolations(page), page.url()).toEqual([]);
}

function invitationMail(inviteId: string): OutboxRecord | undefined {
  const dir = inject("outboxDir");
  if (!existsSync(dir)) return undefined;
  const name = readdirSync(dir).find((f) => f.endsWith(`-${inviteId}.v1.json`));
  return name ? (JSON.parse(readFileSync(join(dir, name), "utf8")) as OutboxRecord) : undefined;
}

async function invite(page: Page, email: string): Promise<{ inviteId: string; link: string }> {
  await page.getByLabel("Candidate's e-mail address").fill(email);
  await page.getByRole("button", { name: "Invite", exact: true }).click();
  await page.getByText(`Invitation to ${email} queued for sending.`).waitFor({ timeout: STEP_MS });
  const staff = await staffToken();
  const listed = (await (await api(`/api/v1/invites?organization_id=${ORG}&email=${encodeURIComponent(email)}`, { token: staff })).json()) as { items: { invite_id: string }[] };
  const inviteId = listed.items[0]!.invite_id;
  // Through the dev mail sink, as the mail provider would send it.
  const mail = await poll("the invitation's e-mail", () => invitationMail(inviteId), { timeoutMs: 30_000, intervalMs: 200, maxIntervalMs: 2000 });
  expect(mail.to).toBe(email);
  expect(mail.subject).toContain("Add a maxLength option to slugify");
  expect(mail.html).toContain(`<a href="${mail.links[0]}">`);
  return { inviteId, link: mail.links[0]! };
}

/** Replaces the editor's whole text, as a paste would (typing would meet auto-indent and bracket closing). */
async function replaceEditorText(page: Page, text: string): Promise<void> {
  const editor = page.locator(".cm-content");
  await editor.click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(text);
}

let lastRun = "\u0000";

/** Runs the tests from the workspace and answers the new run's results as the page shows them. */
async function runTests(page: Page): Promise<string> {
  await page.getByRole("tab", { name: /tests/i }).click();
  const runs = page.locator(".run-list li");
  const before = await runs.count();
  await page.getByRole("button", { name: "Run tests" }).click();
  await runs.nth(before).waitFor({ timeout: STEP_MS });
  const detail = page.locator(".run-detail[aria-busy='false']");
  await poll("the new run's results", async () => ((await detail.count()) > 0 && !(await detail.innerText()).includes(lastRun) ? true : undefined), {
    timeoutMs: 180_000,
    intervalMs: 250,
  });
  lastRun = await detail.innerText();
  return lastRun;
}

describe("the web app in Chromium (npm start)", () => {
  let browser: Browser;
  let interviewerPage: Page;
  let candidatePage: Page;
  let taskId: string;
  let candidateLink: string;
  let candidateInvite: string;
  let attemptId: string;

  beforeAll(async () => {
    browser = await launchChromium();
    interviewerPage = await (await userContext(browser)).newPage();
    candidatePage = await (await userContext(browser)).newPage();
  });
  afterAll(async () => browser?.close());
  // The steps are one journey: after a failed step the later ones would only wait out their timeouts.
  let failed: string | undefined;
  beforeEach((context) => {
    if (failed) context.skip(`an earlier step failed: ${failed}`);
    onTestFailed(async () => {
      failed = context.task.name;
      // What each user saw, for the failure's report.
      for (const page of [interviewerPage, candidatePage]) {
        const text = await page.locator("body").innerText({ timeout: 2000 }).catch(() => "(no page)");
        console.error(`--- ${page.url()}\n${text.slice(0, 3000)}`);
      }
    });
  });

  it("an interviewer signs in, imports the demo pull request, sees it READY and invites a candidate", { timeout: 300_000 }, async () => {
    const page = interviewerPage;
    await page.goto(`${inject("apiUrl")}/`);
    await signIn(page, INTERVIEWER);
    await page.waitForURL(`${inject("apiUrl")}/console/tasks`);
    await page.getByRole("heading", { name: "Tasks", exact: true }).waitFor();
    await accessible(page);

    await page.getByLabel("Pull request URL").fill(`${inject("repohostUrl")}/${REPO}/pull/1`);
    await page.getByLabel("Candidates may use the AI assistant").check();
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.waitForURL(/\/console\/tasks\/tsk_/, { timeout: STEP_MS });
    taskId = new URL(page.url()).pathname.split("/").pop()!;
    await page.locator("h1 .badge", { hasText: "READY" }).waitFor({ timeout: 240_000 });
    await accessible(page);
    await page.getByRole("heading", { name: "Hidden tests" }).waitFor();

    const { inviteId, link } = await invite(page, CANDIDATE.email);
    candidateInvite = inviteId;
    expect(link).toMatch(new RegExp(`^${inject("apiUrl")}/invites/accept\\?token=`));
    await page.getByRole("cell", { name: CANDIDATE.email }).first().waitFor();
    candidateLink = link;
  });

  it("the candidate follows the e-mail's link, signs in, accepts and opens the workspace", { timeout: 180_000 }, async () => {
    const page = candidatePage;
    await page.goto(candidateLink);
    await signIn(page, CANDIDATE);
    await page.getByRole("heading", { name: /You have joined/ }).waitFor({ timeout: STEP_MS });
    const staff = await staffToken();
    const shown = await api(`/api/v1/invites/${candidateInvite}`, { token: staff });
    expect(await shown.json()).toMatchObject({ status: "used", delivery_status: "sent", delivery_attempts: 1 });
    await accessible(page);
    await page.getByRole("button", { name: "Open the task" }).click();
    await page.waitForURL(/\/attempts\/att_/, { timeout: STEP_MS });
    attemptId = new URL(page.url()).pathname.split("/").pop()!;
    // Opening the task does not start the clock: the candidate reads it, then starts.
    await page.getByRole("button", { name: /^Start/ }).click({ timeout: STEP_MS });
    await page.getByRole("tree", { name: "Files" }).waitFor({ timeout: STEP_MS });
    await accessible(page);
  });

  it("edits a file, runs the tests and sees a failing test, fixes it and sees them pass", { timeout: 420_000 }, async () => {
    const page = candidatePage;
    const src = page.getByRole("treeitem", { name: /^src/ });
    if ((await src.getAttribute("aria-expanded")) === "false") await src.click();
    await page.getByRole("treeitem", { name: /^slugify\.js/ }).click();
    await page.locator(".cm-content", { hasText: "COMBINING_MARKS" }).waitFor({ timeout: STEP_MS });
    await replaceEditorText(page, slugifyAt("base").replace('separator = "-"', 'separator = "+"'));
    const failing = await runTests(page);
    expect(failing).toMatch(/\b\d+ passed, [1-9]\d* failed\b/);
    expect(failing).toContain("joins words with hyphens");

    await replaceEditorText(page, slugifyAt("head"));
    const passing = await runTests(page);
    expect(passing).toMatch(/\b[1-9]\d* passed, 0 failed\b/);
    await accessible(page);
  });

  it("runs a program in the terminal: typed input is echoed and answered, and Terminate ends it", { timeout: 180_000 }, async () => {
    const page = candidatePage;
    await page.getByRole("button", { name: "New file" }).click();
    await page.getByLabel("Path of the new file").fill("echo.js");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await page.locator(".cm-content").waitFor();
    // A command-line program's honest process.exit: the reviewer sees it flagged on the report, with no score lowered.
    await replaceEditorText(page, "process.stdin.on('data', (d) => {\n  const line = String(d).trim();\n  if (line === 'quit') process.exit(0);\n  console.log('got ' + line);\n});\n");
    await page.getByRole("button", { name: "Run echo.js" }).click();
    const terminal = page.locator(".terminal-host");
    await page.getByRole("button", { name: "Terminate" }).and(page.locator(":enabled")).waitFor({ timeout: STEP_MS });
    await terminal.click();
    await page.keyboard.type("hello web");
    await page.keyboard.press("Enter");
    await poll("the program's answer in the terminal", async () => ((await terminal.innerText()).includes("got hello web") ? true : undefined), { timeoutMs: STEP_MS, intervalMs: 200 });
    expect(await terminal.innerText()).toContain("hello web");
    await page.getByRole("button", { name: "Terminate" }).click();
    await page.getByRole("button", { name: "Run echo.js" }).and(page.locator(":enabled")).waitFor({ timeout: STEP_MS });
  });

  it("asks the assistant and reads its answer", { timeout: 120_000 }, async () => {
    const page = candidatePage;
    await page.getByRole("tab", { name: /assistant/i }).click();
    await page.getByLabel("Message to the assistant").fill("How do I keep whole words within maxLength?");
    await page.getByRole("button", { name: /Send|Ask/ }).click();
    await page.getByText("[local assistant]").first().waitFor({ timeout: STEP_MS });
    await accessible(page);
  });

  it("a revoked IDE session's web link says so in words", { timeout: 120_000 }, async () => {
    const candidate = await devToken({ sub: CANDIDATE.sub, email: CANDIDATE.email, role: "candidate" });
    const opened = await api(`/api/v1/attempts/${attemptId}/ide-session`, { method: "POST", token: candidate, body: {} });
    expect(opened.status).toBe(201);
    const session = (await opened.json()) as { session_token: string; web_link: string };
    const revoked = await api(`/api/v1/attempts/${attemptId}/ide-session/${session.session_token}`, { method: "DELETE", token: candidate });
    expect(revoked.status).toBe(204);
    const page = await (await userContext(browser)).newPage();
    await page.goto(session.web_link);
    await page.getByRole("alert").filter({ hasText: /revoked/i }).waitFor({ timeout: STEP_MS });
    expect(new URL(page.url()).hash).toBe("");
    await accessible(page);
    await page.context().close();
  });

  it("submits after a confirmation that says what is final; opened again, the attempt is read-only", { timeout: 120_000 }, async () => {
    const page = candidatePage;
    await page.getByRole("button", { name: "Submit…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Submitting is final.").waitFor();
    await dialog.getByLabel("Your account of the work (optional)").fill(EXPLANATION);
    await accessible(page);
    await dialog.getByRole("button", { name: "Submit, final" }).click();
    await page.getByText(/submitted/i).first().waitFor({ timeout: STEP_MS });

    await page.reload();
    await page.getByText(/You submitted this attempt on .*It is read-only now/).waitFor({ timeout: STEP_MS });
    expect(await page.getByRole("button", { name: "Run tests" }).count()).toBe(0);
    await accessible(page);
    await page.getByRole("link", { name: "My assessments" }).click();
    await page.getByRole("heading", { name: "Your assessments", level: 1 }).waitFor({ timeout: STEP_MS });
    await accessible(page);
  });

  it("the interviewer reads the score report, replays the timeline and finds the attempt in analytics", { timeout: 300_000 }, async () => {
    const page = interviewerPage;
    await page.goto(`${inject("apiUrl")}/console/attempts/${attemptId}/report`);
    await page.getByText(/Overall/i).first().waitFor({ timeout: 240_000 });
    await page.getByRole("heading", { name: /correctness/i }).first().waitFor({ timeout: STEP_MS });
    // The review flags with their numbered lines: evidence for the reviewer, not a deduction.
    const flags = page.getByRole("region", { name: "Review flags" });
    await flags.waitFor({ timeout: STEP_MS });
    expect(await flags.innerText()).toMatch(/not a deduction[\s\S]*echo\.js[\s\S]*3 │ if \(line === 'quit'\) process\.exit\(0\);/);
    await page.locator("blockquote", { hasText: EXPLANATION }).waitFor({ timeout: STEP_MS });
    await accessible(page);

    await page.goto(`${inject("apiUrl")}/console/attempts/${attemptId}/replay`);
    const scrubber = page.getByRole("slider");
    await scrubber.waitFor({ timeout: STEP_MS });
    await scrubber.focus();
    await page.keyboard.press("End");
    await page.keyboard.press("Home");
    await page.keyboard.press("ArrowRight");
    expect(Number(await scrubber.inputValue())).toBe(1);
    await accessible(page);

    await page.goto(`${inject("apiUrl")}/console/analytics`);
    await page.getByRole("heading", { name: /funnel/i }).first().waitFor({ timeout: STEP_MS });
    await accessible(page);
    expect(await page.locator("main").innerText()).toMatch(/submitted/i);

    // The console's other pages, reached with the keyboard from the header's navigation.
    for (const [link, heading] of [["Drafts", "Task drafts"], ["Templates", "Templates"]]) {
      await page.getByRole("link", { name: link, exact: true }).focus();
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: heading, exact: true, level: 1 }).waitFor({ timeout: STEP_MS });
      await accessible(page);
    }
  });

  it("the candidate's attempt page opens on their score: the subscores, the tests by count, their explanation", { timeout: 120_000 }, async () => {
    const page = candidatePage;
    // My assessments was read before scoring had finished; read again, it leads to the score.
    await page.reload();
    await page.getByRole("link", { name: /^See your score:/ }).click({ timeout: STEP_MS });
    const panel = page.getByRole("tabpanel", { name: "Your score" });
    await panel.getByText(/Overall \d+(\.\d+)? of 100/).waitFor({ timeout: STEP_MS });
    const text = await panel.innerText();
    expect(text).toMatch(/Correctness[\s\S]*Communication/);
    expect(text).toMatch(/Hidden tests the task asked you to make pass: \d+ of \d+ pass/);
    expect(text).toContain(EXPLANATION);
    await accessible(page);
  });

  it("an expired invitation's link says it expired and what to do", { timeout: 180_000 }, async () => {
    const staff = await staffToken();
    const created = await api("/api/v1/invites/candidate", { method: "POST", token: staff, body: { email: LATE.email, task_id: taskId } });
    expect(created.status).toBe(201);
    const inviteId = ((await created.json()) as { invite_id: string }).invite_id;
    const link = (await poll("the invitation's e-mail", () => invitationMail(inviteId), { timeoutMs: 30_000, intervalMs: 200, maxIntervalMs: 2000 })).links[0]!;
    expireInvitation(inject("stateDir"), inviteId);
    const page = await (await userContext(browser)).newPage();
    await page.goto(link);
    await signIn(page, LATE);
    await page.getByRole("alert").filter({ hasText: /expired/i }).waitFor({ timeout: STEP_MS });
    expect(await page.locator("main").innerText()).toMatch(/resend/i);
    await accessible(page);
    await page.context().close();
  });

  it("when the API answers 429 the page says to wait, in words, instead of breaking", { timeout: 120_000 }, async () => {
    const context = await userContext(browser);
    const page = await context.newPage();
    await page.goto(`${inject("apiUrl")}/`);
    await signIn(page, INTERVIEWER);
    await page.getByRole("heading", { name: "Tasks", exact: true }).waitFor({ timeout: STEP_MS });
    // This browser's address is kept over its limits from elsewhere, ten requests a second, so the
    // app's one retry after the burst window meets a refusal too, whichever window it falls in.
    let flooding = true;
    let refused = false;
    const flood = (async () => {
      while (flooding) {
        const res = await fetch(`${inject("apiUrl")}/api/v1/me`, { headers: { "cf-connecting-ip": context.ip } });
        refused ||= res.status === 429;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      await poll("the address over its limit", () => (refused ? true : undefined), { timeoutMs: STEP_MS, intervalMs: 100 });
      await page.getByRole("link", { name: "Templates" }).click();
      await page.getByRole("alert").filter({ hasText: /Rate limit exceeded \(\d+ requests per (10 seconds|minute)\); retry after/ }).waitFor({ timeout: STEP_MS });
    } finally {
      flooding = false;
      await flood;
    }
    await context.close();
  });
});
