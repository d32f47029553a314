import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { OutboxRecord } from "../../src/domain/outbox";
import { poll } from "../../scripts/lib/wait";
import { signInAtDevProvider, type DevUser } from "../../scripts/lib/browser";
import { launchChromium, seriousViolations, stepsOfOneJourney, userContext } from "../support/node/browser";
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
  stepsOfOneJourney(() => [interviewerPage, candidatePage]);

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
    // The candidate and the task by name, and the submission's changes against the task's version, file by file.
    const task = (await (await api(`/api/v1/tasks/${taskId}`, { token: await staffToken() })).json()) as { title: string };
    await page.locator("p.lead", { hasText: `${CANDIDATE.email} on ${task.title}` }).waitFor({ timeout: STEP_MS });
    await page.getByRole("heading", { name: "The submission's changes" }).waitFor({ timeout: STEP_MS });
    await page.locator(".diff-file summary", { hasText: "src/slugify.js" }).waitFor({ timeout: STEP_MS });
    await page.locator(".diff-file summary", { hasText: "echo.js" }).waitFor({ timeout: STEP_MS });
    await page.locator(".diff-view .cm-changedLine").first().waitFor({ timeout: STEP_MS });
    await page.getByLabel("Side by side").check();
    await page.locator(".diff-view .cm-mergeView").first().waitFor({ timeout: STEP_MS });
    await accessible(page);

    await page.goto(`${inject("apiUrl")}/console/attempts/${attemptId}/replay`);
    const scrubber = page.getByRole("slider", { name: "Position in the timeline" });
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

  // ---- A phone's width, and the keyboard alone (docs/web-app.md, "On a phone" and "By keyboard"). ----
  const PHONE = { width: 390, height: 844 };
  /** A candidate of their own, with an attempt in progress on the task, for the pages only a live attempt has. */
  const PAT = { email: `pat-${process.pid}@example.test`, role: "candidate", sub: `e2e-web-pat-${process.pid}` };
  const patToken = () => devToken({ sub: PAT.sub, email: PAT.email, role: "candidate" });
  let patAttempt: string;
  let patPage: Page;

  /** What pokes out past the screen's right edge, outermost boxes that are not scrolled in a box of their own: none expected. */
  function sideways(page: Page): Promise<string[]> {
    return page.evaluate(() => {
      const width = window.innerWidth;
      if (document.documentElement.scrollWidth <= width) return [];
      const fits = (el: Element) => el.getBoundingClientRect().right <= width + 0.5;
      const scrolledInside = (el: Element) => {
        for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) if (getComputedStyle(up).overflowX !== "visible" && fits(up)) return true;
        return false;
      };
      const wide = Array.from(document.body.querySelectorAll("*")).filter((el) => !fits(el));
      // Boxes scrolled inside a box of their own do not widen the page, unless positioned out of it.
      const out = wide.some((el) => !scrolledInside(el)) ? wide.filter((el) => !scrolledInside(el)) : wide;
      const name = (el: Element) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${typeof el.className === "string" && el.className.trim() ? `.${el.className.trim().split(/\s+/).join(".")}` : ""}`;
      return [
        `the document is ${document.documentElement.scrollWidth} px wide on a ${width} px screen`,
        ...out.filter((el) => !out.includes(el.parentElement!)).slice(0, 8).map((el) => `${name(el)} reaches ${Math.round(el.getBoundingClientRect().right)} px: ${(el.textContent ?? "").trim().slice(0, 40)}`),
      ];
    });
  }

  /** Words of table cells broken across lines (a cell squeezed to a letter a line): none expected. */
  function brokenWords(page: Page): Promise<string[]> {
    return page.evaluate(() => {
      const broken: string[] = [];
      for (const cell of Array.from(document.querySelectorAll("main table :is(td, th)"))) {
        const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = texts.nextNode() as Text | null; node; node = texts.nextNode() as Text | null) {
          for (const word of node.data.matchAll(/[^\s-]+/g)) {
            const range = document.createRange();
            range.setStart(node, word.index);
            range.setEnd(node, word.index + word[0].length);
            if (range.getClientRects().length > 1) broken.push(word[0]);
          }
        }
      }
      return broken.slice(0, 10);
    });
  }

  /** Opens `path`, waits for what shows the page is there, and checks it at the page's width: no sideways scrolling, no broken words, axe clean. */
  async function fits(page: Page, path: string, shown: (page: Page) => ReturnType<Page["locator"]>): Promise<void> {
    if (path) await page.goto(`${inject("apiUrl")}${path}`);
    await shown(page).first().waitFor({ timeout: STEP_MS });
    await accessible(page);
    // Soft: one run names every page that does not fit.
    expect.soft(await sideways(page), page.url()).toEqual([]);
    expect.soft(await brokenWords(page), page.url()).toEqual([]);
  }

  /** Whether `locator`'s box lies within the screen's width, not cut off at either side. */
  async function onScreen(page: Page, locator: ReturnType<Page["locator"]>): Promise<boolean> {
    const box = await locator.boundingBox();
    return !!box && box.x >= 0 && box.x + box.width <= page.viewportSize()!.width;
  }

  it("every page fits a phone's screen (390×844): nothing scrolls sideways, tables scroll in their box, the workspace's panes are tabs", { timeout: 300_000 }, async () => {
    // Pat: invited, accepted and started through the API.
    const staff = await staffToken();
    const invited = await api("/api/v1/invites/candidate", { method: "POST", token: staff, body: { email: PAT.email, task_id: taskId } });
    expect(invited.status).toBe(201);
    const inviteId = ((await invited.json()) as { invite_id: string }).invite_id;
    const link = (await poll("the invitation's e-mail", () => invitationMail(inviteId), { timeoutMs: 30_000, intervalMs: 200, maxIntervalMs: 2000 })).links[0]!;
    const pat = await patToken();
    expect((await api("/api/v1/invites/accept", { method: "POST", token: pat, body: { token: new URL(link).searchParams.get("token") } })).status).toBe(200);
    const created = await api("/api/v1/attempts", { method: "POST", token: pat, body: { task_id: taskId } });
    expect(created.status).toBe(201);
    patAttempt = ((await created.json()) as { id: string }).id;
    expect((await api(`/api/v1/attempts/${patAttempt}/start`, { method: "POST", token: pat })).status).toBe(200);

    // The staff's pages, the header folded into its menu.
    const page = interviewerPage;
    await page.setViewportSize(PHONE);
    await fits(page, "/console/tasks", (p) => p.getByRole("heading", { name: "Tasks", exact: true }));
    const menu = page.getByRole("button", { name: "Menu" });
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    expect(await page.getByRole("link", { name: "Analytics" }).isVisible()).toBe(false);
    await menu.click();
    await page.getByRole("link", { name: "Analytics" }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).waitFor();
    expect(await sideways(page)).toEqual([]);
    await accessible(page);
    await page.getByRole("link", { name: "Templates" }).click();
    await page.getByRole("heading", { name: "Templates", exact: true, level: 1 }).waitFor({ timeout: STEP_MS });
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await fits(page, "", (p) => p.getByRole("heading", { name: "Templates", exact: true, level: 1 }));
    await fits(page, `/console/tasks/${taskId}`, (p) => p.getByRole("cell", { name: PAT.email }));
    await fits(page, `/console/attempts/${attemptId}/report`, (p) => p.getByRole("region", { name: "Review flags" }));
    await fits(page, `/console/attempts/${attemptId}/replay`, (p) => p.getByRole("slider", { name: "Position in the timeline" }));
    await fits(page, "/console/analytics", (p) => p.getByRole("heading", { name: /funnel/i }));
    await fits(page, "/console/drafts", (p) => p.getByRole("heading", { name: "Task drafts", exact: true, level: 1 }));
    await fits(page, "/console/no-such-page", (p) => p.getByRole("alert").filter({ hasText: "There is no page at" }));

    // The candidate's: their assessments, a scored attempt (its score), an unknown one, a failed sign-in.
    const candidate = candidatePage;
    await candidate.setViewportSize(PHONE);
    await fits(candidate, "/attempts", (p) => p.getByRole("heading", { name: "Your assessments", level: 1 }));
    await fits(candidate, `/attempts/${attemptId}`, (p) => p.getByRole("tabpanel", { name: "Your score" }).getByText(/Overall \d+(\.\d+)? of 100/));
    await fits(candidate, "/attempts/att_none", (p) => p.getByRole("alert"));
    await fits(candidate, "/auth/callback?code=none&state=none", (p) => p.getByRole("heading", { name: "Sign-in" }));

    // Pat at the provider's sign-in page, then the workspace of a live attempt: one pane at a time.
    patPage = await (await userContext(browser)).newPage();
    await patPage.setViewportSize(PHONE);
    await patPage.goto(`${inject("apiUrl")}/attempts/${patAttempt}`);
    await patPage.waitForURL((url) => url.origin === inject("idpUrl") && url.pathname.startsWith("/interaction/"), { timeout: STEP_MS });
    expect.soft(await sideways(patPage), "the sign-in page").toEqual([]);
    await signIn(patPage, PAT);
    await fits(patPage, "", (p) => p.locator(".cm-content"));
    expect(await patPage.getByRole("tab", { name: "Editor" }).getAttribute("aria-selected")).toBe("true");
    expect(await onScreen(patPage, patPage.getByRole("button", { name: "Submit…" }))).toBe(true);
    await patPage.getByRole("tab", { name: "Files" }).click();
    await fits(patPage, "", (p) => p.getByRole("tree", { name: "Files" }));
    expect(await patPage.locator(".cm-content").isVisible()).toBe(false);
    expect(await onScreen(patPage, patPage.getByRole("button", { name: "New file" }))).toBe(true);
    const src = patPage.getByRole("treeitem", { name: /^src/ });
    if ((await src.getAttribute("aria-expanded")) === "false") await src.click();
    await patPage.getByRole("treeitem", { name: /^slugify\.js/ }).click();
    await patPage.locator(".cm-content", { hasText: "COMBINING_MARKS" }).waitFor({ timeout: STEP_MS });
    expect(await patPage.getByRole("tab", { name: "Editor" }).getAttribute("aria-selected")).toBe("true");
    await patPage.getByRole("tab", { name: /^Task/ }).click();
    await fits(patPage, "", (p) => p.getByRole("tab", { name: "Tests", exact: true }));
    await patPage.getByRole("tab", { name: "Terminal" }).click();
    await fits(patPage, "", (p) => p.getByRole("button", { name: /^Run slugify\.js/ }));
  });

  it("works by keyboard alone: Skip to content, the phone's menu, and a new file typed into at once", { timeout: 120_000 }, async () => {
    const page = patPage;
    const focused = () =>
      page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        return { id: el?.id ?? "", text: (el?.innerText ?? "").trim(), label: el?.getAttribute("aria-label") ?? "", inMain: !!el?.closest("main"), expanded: el?.getAttribute("aria-expanded") ?? null };
      });
    /** Presses `key` until the focus is where `want` says (at most 40 times). */
    async function pressUntil(key: string, want: (f: Awaited<ReturnType<typeof focused>>) => boolean): Promise<void> {
      for (let i = 0; i < 40 && !want(await focused()); i++) await page.keyboard.press(key);
      expect(want(await focused()), JSON.stringify(await focused())).toBe(true);
    }

    // Skip to content: the first tab stop, and it moves the focus into the page's main content.
    await page.goto(`${inject("apiUrl")}/attempts`);
    await page.getByRole("heading", { name: "Your assessments", level: 1 }).waitFor({ timeout: STEP_MS });
    await page.locator("main a").first().waitFor({ timeout: STEP_MS });
    await page.keyboard.press("Tab");
    expect((await focused()).text).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect((await focused()).id).toBe("main");
    await page.keyboard.press("Tab");
    expect((await focused()).inMain).toBe(true);

    // The header's menu on a phone: Enter and Space open it, Escape closes it and gives the focus back.
    // Each key's effect is polled: the menu's state renders after the key's handler returns.
    const link = page.getByRole("link", { name: "My assessments" });
    await pressUntil("Shift+Tab", (f) => f.text === "Menu");
    expect((await focused()).expanded).toBe("false");
    expect(await link.isVisible()).toBe(false);
    await page.keyboard.press("Enter");
    await expect.poll(async () => (await focused()).expanded).toBe("true");
    await expect.poll(() => link.isVisible()).toBe(true);
    await page.keyboard.press("Tab");
    await expect.poll(async () => (await focused()).text).toBe("My assessments");
    await page.keyboard.press("Escape");
    await expect.poll(() => focused()).toMatchObject({ text: "Menu", expanded: "false" });
    await expect.poll(() => link.isVisible()).toBe(false);
    await page.keyboard.press("Space");
    await expect.poll(async () => (await focused()).expanded).toBe("true");
    await page.keyboard.press("Escape");
    await expect.poll(() => focused()).toMatchObject({ text: "Menu", expanded: "false" });

    // A new file, by keyboard: the keys typed right after Create go into it.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${inject("apiUrl")}/attempts/${patAttempt}`);
    await page.locator(".cm-content").waitFor({ timeout: STEP_MS });
    await pressUntil("Tab", (f) => f.text === "New file");
    await page.keyboard.press("Enter");
    expect((await focused()).id).toBe("new-file-path");
    await page.keyboard.type("typed.js");
    await page.keyboard.press("Enter");
    await page.keyboard.type("const typed = 1;");
    expect((await focused()).label).toBe("Editor: typed.js");
    await page.locator(".cm-content", { hasText: "const typed = 1;" }).waitFor();
    await page.getByRole("heading", { name: "typed.js" }).waitFor();
    const pat = await patToken();
    await poll(
      "typed.js saved with what was typed",
      async () => {
        const res = await api(`/api/v1/attempts/${patAttempt}/files/content?path=typed.js`, { token: pat });
        return res.ok && Buffer.from(((await res.json()) as { content_b64: string }).content_b64, "base64").toString() === "const typed = 1;" ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await accessible(page);
  });

  it("the editor closes brackets and lists completions as one types; the candidate's list shows invitations first, with their organization", { timeout: 180_000 }, async () => {
    // Pat's live attempt, typed.js open from the step before (docs/web-app.md, "Editor help").
    const page = patPage;
    await page.locator(".cm-content").click();
    await page.keyboard.press("Control+End");
    await page.keyboard.press("Enter");
    await page.keyboard.type("console.log(");
    await page.locator(".cm-line", { hasText: /^console\.log\(\)$/ }).waitFor({ timeout: STEP_MS });
    await page.keyboard.type("typ");
    const completions = page.getByRole("listbox", { name: "Completions" });
    await completions.getByRole("option", { name: "typed", exact: true }).waitFor({ timeout: STEP_MS });
    await accessible(page);
    await page.keyboard.press("Enter");
    await page.locator(".cm-line", { hasText: /^console\.log\(typed\)$/ }).waitFor({ timeout: STEP_MS });
    expect(await completions.count()).toBe(0);

    // Quinn, invited and accepted through the API, by an organization with a name of its own.
    const orgName = `Journey Assessments ${process.pid}`;
    const admin = await devToken({ sub: `e2e-web-admin-${process.pid}`, role: "orgadmin", org: ORG });
    expect((await api(`/api/v1/organizations/${ORG}`, { method: "PATCH", token: admin, body: { name: orgName } })).status).toBe(200);
    const QUINN = { email: `quinn-${process.pid}@example.test`, role: "candidate", sub: `e2e-web-quinn-${process.pid}` };
    const invited = await api("/api/v1/invites/candidate", { method: "POST", token: await staffToken(), body: { email: QUINN.email, task_id: taskId } });
    expect(invited.status).toBe(201);
    const inviteId = ((await invited.json()) as { invite_id: string }).invite_id;
    const link = (await poll("the invitation's e-mail", () => invitationMail(inviteId), { timeoutMs: 30_000, intervalMs: 200, maxIntervalMs: 2000 })).links[0]!;
    const quinn = await devToken({ sub: QUINN.sub, email: QUINN.email, role: "candidate" });
    expect((await api("/api/v1/invites/accept", { method: "POST", token: quinn, body: { token: new URL(link).searchParams.get("token") } })).status).toBe(200);
    const list = await (await userContext(browser)).newPage();
    await list.goto(`${inject("apiUrl")}/attempts`);
    await signIn(list, QUINN);
    const invitations = list.getByRole("region", { name: "Your invitations" });
    await invitations.getByRole("button", { name: `Open the task: Add a maxLength option to slugify, from ${orgName}` }).waitFor({ timeout: STEP_MS });
    await invitations.getByText(`From ${orgName}`).waitFor();
    const headings = await list.locator("main h2").allInnerTexts();
    expect(headings[0]).toBe("Your invitations");
    expect(headings.slice(1).filter((h) => h !== "Public tasks")).toEqual(["Your attempts"]);
    await accessible(list);
    await list.context().close();
  });
});
