import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { signInAtDevProvider, type DevUser } from "../../scripts/lib/browser";
import { launchChromium, seriousViolations, stepsOfOneJourney, userContext, type AxeViolation } from "../support/node/browser";
import { api, devToken, settledTask } from "../support/node/http-client";

// A live interview in two Chromium browsers (docs/web-app.md, "Live sessions"): the candidate
// works in their workspace, the interviewer joins from the task's candidates, both type in the
// same file and each sees the other's text and cursor, the candidate's test run shows in both,
// staff write a note the candidate never sees, and the candidate submits: the session turns
// read-only for the interviewer, and the replay plays the session back, keystroke by keystroke.
const ORG = `e2e-live-${process.pid}`;
const INTERVIEWER: DevUser = { email: `ivy-${process.pid}@example.test`, role: "interviewer", org: ORG, sub: `e2e-live-ivy-${process.pid}` };
const CANDIDATE: DevUser = { email: `cal-${process.pid}@example.test`, role: "candidate", sub: `e2e-live-cal-${process.pid}` };
const STEP_MS = 60_000;
const NOTE = "Asked about emoji-only titles; good answer.";

async function signIn(page: Page, path: string, who: DevUser): Promise<void> {
  await page.goto(`${inject("apiUrl")}${path}`);
  await signInAtDevProvider(page, inject("idpUrl"), who, STEP_MS);
}

/** Types `text` on a new last line of the page's editor. */
async function typeAtEnd(page: Page, text: string): Promise<void> {
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Enter");
  await page.keyboard.type(text);
}

describe("a live session in two browsers", () => {
  let browser: Browser;
  let candidatePage: Page;
  let interviewerPage: Page;
  let taskId: string;
  let attemptId: string;
  /** axe-core's findings on both pages while each shows the other's cursor; checked last, so the journey goes on. */
  const violations: Record<string, AxeViolation[]> = {};

  beforeAll(async () => {
    browser = await launchChromium();
    candidatePage = await (await userContext(browser)).newPage();
    interviewerPage = await (await userContext(browser)).newPage();
  });
  afterAll(async () => browser?.close());
  stepsOfOneJourney(() => [candidatePage, interviewerPage]);

  it("staff turn live sessions on for a task; the candidate starts an attempt and opens a file in the workspace", { timeout: 540_000 }, async () => {
    const staff = await devToken({ sub: INTERVIEWER.sub!, email: INTERVIEWER.email, role: "interviewer", org: ORG });
    // The demo pull request, imported as readyDemoTask does, with room for a busy machine's validation.
    const imported = await api("/api/v1/tasks/import-pr", {
      method: "POST",
      token: staff,
      body: { pr_url: `${inject("repohostUrl")}/assay-demo/slugify-js/pull/1`, visibility: "PUBLIC", organization_id: ORG },
    });
    expect(imported.status).toBe(202);
    taskId = ((await imported.json()) as { task_id: string }).task_id;
    expect(await settledTask<{ status: string; failure_reason: string | null }>(staff, taskId, 420_000)).toMatchObject({ status: "READY" });
    const patched = await api(`/api/v1/tasks/${taskId}`, { method: "PATCH", token: staff, body: { live_sessions: true } });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ live_sessions: true });
    const candidate = await devToken({ sub: CANDIDATE.sub!, email: CANDIDATE.email, role: "candidate" });
    const created = await api("/api/v1/attempts", { method: "POST", token: candidate, body: { task_id: taskId } });
    expect(created.status).toBe(201);
    attemptId = ((await created.json()) as { id: string }).id;
    expect((await api(`/api/v1/attempts/${attemptId}/start`, { method: "POST", token: candidate })).status).toBe(200);

    const page = candidatePage;
    await signIn(page, `/attempts/${attemptId}`, CANDIDATE);
    const src = page.getByRole("treeitem", { name: /^src/ });
    await src.waitFor({ timeout: STEP_MS });
    if ((await src.getAttribute("aria-expanded")) === "false") await src.click();
    await page.getByRole("treeitem", { name: /^slugify\.js/ }).click();
    await page.locator(".cm-content", { hasText: "COMBINING_MARKS" }).waitFor({ timeout: STEP_MS });
    await page.locator(".live-status", { hasText: "No one else is here." }).waitFor({ timeout: STEP_MS });
  });

  it("the interviewer joins live from the task's candidates and follows the candidate's file; the candidate sees who joined", { timeout: 180_000 }, async () => {
    const page = interviewerPage;
    await signIn(page, `/console/tasks/${taskId}`, INTERVIEWER);
    await page.getByRole("link", { name: `Join live: ${CANDIDATE.email}` }).click({ timeout: STEP_MS });
    await page.waitForURL(`${inject("apiUrl")}/console/attempts/${attemptId}/live`, { timeout: STEP_MS });
    await page.getByRole("heading", { name: "src/slugify.js" }).waitFor({ timeout: STEP_MS });
    await page.locator(".cm-content", { hasText: "COMBINING_MARKS" }).waitFor({ timeout: STEP_MS });
    await page.locator(".live-status", { hasText: `Candidate ${CANDIDATE.email} is here, in src/slugify.js.` }).waitFor({ timeout: STEP_MS });
    await candidatePage.locator(".live-status", { hasText: `Interviewer ${INTERVIEWER.email} is here, in src/slugify.js.` }).waitFor({ timeout: STEP_MS });
  });

  it("both type in the same file: each sees the other's text and cursor, and the edits are saved to the attempt", { timeout: 180_000 }, async () => {
    await typeAtEnd(candidatePage, "// typed by the candidate");
    await interviewerPage.locator(".cm-line", { hasText: "// typed by the candidate" }).waitFor({ timeout: STEP_MS });
    await typeAtEnd(interviewerPage, "// typed by the interviewer");
    await candidatePage.locator(".cm-line", { hasText: "// typed by the interviewer" }).waitFor({ timeout: STEP_MS });
    // Each editor draws the other's cursor, named.
    await candidatePage.locator(".cm-ySelectionCaret", { hasText: INTERVIEWER.email }).waitFor({ state: "attached", timeout: STEP_MS });
    await candidatePage.locator(".cm-content").click();
    await interviewerPage.locator(".cm-ySelectionCaret", { hasText: CANDIDATE.email }).waitFor({ state: "attached", timeout: STEP_MS });
    violations.candidate = await seriousViolations(candidatePage);
    violations.interviewer = await seriousViolations(interviewerPage);

    const candidate = await devToken({ sub: CANDIDATE.sub!, email: CANDIDATE.email, role: "candidate" });
    await expect
      .poll(
        async () => {
          const res = await api(`/api/v1/attempts/${attemptId}/files/content?path=src/slugify.js`, { token: candidate });
          return res.ok ? Buffer.from(((await res.json()) as { content_b64: string }).content_b64, "base64").toString() : "";
        },
        { timeout: 30_000, interval: 500 },
      )
      .toMatch(/\/\/ typed by the candidate\n\/\/ typed by the interviewer\n?$/);
  });

  it("the candidate runs the tests: the run's result shows in both browsers; staff notes stay with staff", { timeout: 300_000 }, async () => {
    const page = candidatePage;
    await page.getByRole("tab", { name: /tests/i }).click();
    await page.getByRole("button", { name: "Run tests" }).click();
    const finished = page.locator(".run-detail[aria-busy='false']");
    await finished.waitFor({ timeout: 240_000 });
    const result = (await finished.locator("p strong").first().innerText()).trim();
    expect(result).toMatch(/\d+ passed/);
    await interviewerPage.locator(".run-detail[aria-busy='false']", { hasText: result }).waitFor({ timeout: STEP_MS });

    await interviewerPage.getByLabel("A note (staff only)").fill(NOTE);
    await interviewerPage.getByRole("button", { name: "Add note" }).click();
    await interviewerPage.locator(".note-list", { hasText: NOTE }).waitFor({ timeout: STEP_MS });
    expect(await candidatePage.locator("body").innerText()).not.toContain(NOTE);
  });

  it("the candidate submits: the interviewer's view turns read-only", { timeout: 120_000 }, async () => {
    const page = candidatePage;
    await page.getByRole("button", { name: "Submit…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Submit, final" }).click();
    await page.getByText(/You submitted this attempt/).waitFor({ timeout: STEP_MS });
    await interviewerPage.getByText("The attempt is submitted: the session is read-only now.").waitFor({ timeout: STEP_MS });
  });

  it("the replay plays the session back with both sides' typing; the report has the staff's note", { timeout: 120_000 }, async () => {
    const page = interviewerPage;
    await page.goto(`${inject("apiUrl")}/console/attempts/${attemptId}/replay`);
    await page.getByRole("button", { name: "Play the edits back" }).click({ timeout: STEP_MS });
    const position = page.getByRole("slider", { name: "Playback position (edits)" });
    await position.waitFor({ timeout: STEP_MS });
    await position.focus();
    await page.keyboard.press("End");
    const file = page.getByLabel("src/slugify.js at this point");
    await file.getByText("// typed by the interviewer").waitFor({ timeout: STEP_MS });
    expect(await file.innerText()).toContain("// typed by the candidate\n// typed by the interviewer");

    await page.goto(`${inject("apiUrl")}/console/attempts/${attemptId}/report`);
    await page.getByText("Live session notes").click({ timeout: STEP_MS });
    await page.locator(".note-list", { hasText: NOTE }).waitFor({ timeout: STEP_MS });
  });

  it("both live pages, with each other's cursor showing, have no serious accessibility violations", () => {
    expect(violations).toEqual({ candidate: [], interviewer: [] });
  });
});
