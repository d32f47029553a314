import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { Browser, Locator, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { accept, createAttempt, invitationToken, invite, ok, pollApi, staffReport, start, userClient, type AssayClient } from "../../scripts/lib/api-steps";
import { signInAtDevProvider, type DevUser } from "../../scripts/lib/browser";
import { poll } from "../../scripts/lib/wait";
import { launchChromium, stepsOfOneJourney, userContext } from "../support/node/browser";
import { devToken, freshIp } from "../support/node/http-client";

// The web app in Chromium as people use it, with what it sends checked request by request
// (docs/web-app.md, "Requests"):
// - an interviewer and a candidate walk the whole journey at a person's pace (a second or two
//   between clicks) from one client address: no request meets a 429, and every page loads with
//   at most two API calls;
// - a candidate types fast and deletes a file: at most one save per debounce window and one in
//   flight, the saved file is exactly what was typed, and every telemetry event sent is stored.
const ORG = `e2e-pace-${process.pid}`;
const REPO = "assay-demo/slugify-js";
const INTERVIEWER: DevUser = { email: `ivy-${process.pid}@example.test`, role: "interviewer", org: ORG };
const CANDIDATE: DevUser = { email: `cal-${process.pid}@example.test`, role: "candidate", sub: `e2e-pace-cal-${process.pid}` };
const TYPIST: DevUser = { email: `tia-${process.pid}@example.test`, role: "candidate", sub: `e2e-pace-tia-${process.pid}` };
const STEP_MS = 60_000;
const EXPLANATION = "Cut at the last whole word within maxLength.";
/** The save queue's pause in typing before a save, and so the least time between two saves (web/src/candidate/save-queue.ts). */
const DEBOUNCE_MS = 1500;
/**
 * The request events' timestamps are taken in this process as Chromium reports them, so two
 * saves may seem a little closer than the page sent them; a save sent once per keystroke round
 * trip (the bug this guards against) is a few hundred milliseconds apart.
 */
const REPORTING_SLACK_MS = 150;

const slugifyAt = (ref: "base" | "head") => execFileSync("git", ["-C", join(inject("repohostRoot"), REPO), "show", `refs/pull/1/${ref}:src/slugify.js`], { encoding: "utf8" });
const staffClient = async () => userClient(inject("apiUrl"), await devToken({ sub: `e2e-pace-staff-${process.pid}`, role: "interviewer", org: ORG }));
const candidateClient = async (who: DevUser) => userClient(inject("apiUrl"), await devToken({ sub: who.sub!, email: who.email, role: "candidate" }));

/** A person's pause between two clicks: what a page does meanwhile is what it does for a person. */
const humanPause = (page: Page) => page.waitForTimeout(1000 + Math.floor(Math.random() * 1000));

// ---- what the pages send -----------------------------------------------------------------------

interface ApiCall {
  page: Page;
  method: string;
  path: string;
  /** Order of the request's start and end among every request event seen. */
  startSeq: number;
  endSeq?: number;
  startedAt: number;
  status?: number;
  /** A telemetry batch's answer. */
  answer?: Promise<unknown>;
}

const TELEMETRY = "/api/v1/siem/events/batch";

interface Navigation {
  url: URL;
  /** The index into the recorded calls at the moment of the navigation. */
  at: number;
}

interface SentEvent {
  event_id: string;
  kind: string;
  occurred_at: string;
  file_path?: string;
  keystrokes?: number;
}

interface SentBatch {
  call: ApiCall;
  events: SentEvent[];
}

/** Every request the watched pages send to the API's origin, in order, with their answers. */
class Traffic {
  readonly calls: ApiCall[] = [];
  /** Every answer from the API's origin that was a 429 (the app's own files included), and every socket refused at its upgrade. */
  readonly refused: string[] = [];
  private readonly navigations = new Map<Page, Navigation[]>();
  private seq = 0;
  /**
   * Telemetry batches' bodies, in the order they were sent. Playwright's request has no body for
   * what the page's fetch sent as a Request object (the typed client does); the DevTools protocol reads it.
   */
  private readonly telemetryBodies: Promise<{ events: SentEvent[] }>[] = [];

  constructor(private readonly origin: string) {}

  watch(page: Page): Page {
    const byRequest = new Map<Request, ApiCall>();
    this.navigations.set(page, []);
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) this.navigations.get(page)!.push({ url: new URL(frame.url()), at: this.calls.length });
    });
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.origin !== this.origin || !url.pathname.startsWith("/api/")) return;
      const call: ApiCall = { page, method: request.method(), path: url.pathname, startSeq: ++this.seq, startedAt: Date.now() };
      byRequest.set(request, call);
      this.calls.push(call);
    });
    page.on("response", (response) => {
      if (new URL(response.url()).origin !== this.origin) return;
      if (response.status() === 429) this.refused.push(`${response.request().method()} ${new URL(response.url()).pathname}`);
      const call = byRequest.get(response.request());
      if (!call) return;
      call.status = response.status();
      if (call.path === TELEMETRY) call.answer = response.json().catch(() => undefined);
    });
    const ended = (request: Request) => {
      const call = byRequest.get(request);
      if (call) call.endSeq = ++this.seq;
    };
    page.on("requestfinished", ended);
    page.on("requestfailed", ended);
    // A socket refused at its upgrade (a 429 among others) is no request event: its error is.
    page.on("websocket", (socket) => socket.on("socketerror", (error) => this.refused.push(`WebSocket ${new URL(socket.url()).pathname}: ${error}`)));
    return page;
  }

  /** Reads the bodies of the telemetry batches `page` sends from now on (`sentBatches`). */
  async readTelemetry(page: Page): Promise<void> {
    const cdp = await page.context().newCDPSession(page);
    cdp.on("Network.requestWillBeSent", (event) => {
      if (event.request.method !== "POST" || new URL(event.request.url).pathname !== TELEMETRY) return;
      this.telemetryBodies.push(cdp.send("Network.getRequestPostData", { requestId: event.requestId }).then((body) => JSON.parse(body.postData) as { events: SentEvent[] }));
    });
    await cdp.send("Network.enable");
  }

  /** The telemetry batches sent so far (from `from`, an index into `calls`), with their events. */
  async sentBatches(from = 0): Promise<SentBatch[]> {
    const calls = this.calls.filter((c) => c.path === TELEMETRY);
    const batches = await Promise.all(calls.map(async (call, i) => ({ call, events: (await this.telemetryBodies[i]!).events })));
    return batches.filter((b) => this.calls.indexOf(b.call) >= from);
  }

  inFlight(page: Page): number {
    return this.calls.filter((c) => c.page === page && c.endSeq === undefined).length;
  }

  /** The page's main-frame navigations so far: new documents, and the app's own (a link, back, forward, a replaced address). */
  navigationsOf(page: Page): Navigation[] {
    return this.navigations.get(page)!;
  }
}

/**
 * What a page load is not (docs/web-app.md, "Requests"): the document's boot (who is signed in,
 * once per document, kept for every page after it), socket tickets (a live connection, not the
 * page's data), telemetry, and saves (the work of the page being left, sent as it goes).
 */
const NOT_PAGE_LOAD: [RegExp, string][] = [
  [/^GET \/api\/v1\/me$/, "boot"],
  [/^POST \/api\/v1\/.*\/ws-ticket$/, "socket ticket"],
  [/^POST \/api\/v1\/siem\/events\/batch$/, "telemetry"],
  [/^PATCH \/api\/v1\/attempts\/[^/]+\/changes$/, "save"],
];
const PAGE_LOAD_BUDGET = 2;

interface PageLoad {
  name: string;
  counted: string[];
  notCounted: string[];
}

// ---- the journey -------------------------------------------------------------------------------

describe("the web app at a person's pace, request by request (npm start)", () => {
  let browser: Browser;
  let traffic: Traffic;
  const loads: PageLoad[] = [];
  let interviewer: Page;
  let candidate: Page;
  let taskId: string;
  let attemptId: string;

  /** Every page of the walk is on this one client address: one office, one NAT. */
  const ip = freshIp();

  beforeAll(async () => {
    browser = await launchChromium();
    traffic = new Traffic(inject("apiUrl"));
    interviewer = traffic.watch(await (await userContext(browser, ip)).newPage());
    candidate = traffic.watch(await (await userContext(browser, ip)).newPage());
  });
  afterAll(async () => browser?.close());
  stepsOfOneJourney(() => [interviewer, candidate]);

  /** Until nothing loads: no API request of the page on its way, no loading state shown. */
  async function settled(page: Page): Promise<void> {
    const busy = page.locator("main[aria-busy='true'], main .state.loading");
    await poll("the page to settle", async () => (traffic.inFlight(page) === 0 && (await busy.count()) === 0 && traffic.inFlight(page) === 0 ? true : undefined), {
      timeoutMs: STEP_MS,
      intervalMs: 100,
    });
  }

  /**
   * One page load: `open` it (a link, a typed address, back), wait until `shown` is there and
   * nothing loads, and keep the API calls from its address's opening on; then a person's pause.
   * A write the click itself made (Import, Open the task) comes before the new address and is
   * the user's action, not the page's load.
   */
  async function pageLoad(page: Page, name: string, open: () => Promise<unknown>, shown: Locator): Promise<void> {
    const from = traffic.calls.length;
    const navigated = traffic.navigationsOf(page).length;
    await open();
    await shown.first().waitFor({ timeout: STEP_MS });
    await settled(page);
    // The load starts at the address's opening: the first navigation after sign-in's round trip
    // (the provider's pages, the callback), not a later one where the page replaced its own
    // address (the invitation's link drops its token once accepted).
    const navigations = traffic.navigationsOf(page).slice(navigated);
    const roundTrip = navigations.findLastIndex((n) => n.url.origin !== inject("apiUrl") || n.url.pathname === "/auth/callback");
    const start = navigations[roundTrip + 1]?.at ?? from;
    const calls = traffic.calls.slice(start).filter((c) => c.page === page);
    const said = (c: ApiCall) => `${c.method} ${c.path}`;
    const excluded = (c: ApiCall) => NOT_PAGE_LOAD.find(([pattern]) => pattern.test(said(c)))?.[1];
    loads.push({
      name,
      counted: calls.filter((c) => !excluded(c)).map(said),
      notCounted: calls.filter((c) => excluded(c)).map((c) => `${said(c)} (${excluded(c)})`),
    });
    await humanPause(page);
  }

  async function signIn(page: Page, who: DevUser): Promise<void> {
    await signInAtDevProvider(page, inject("idpUrl"), who, STEP_MS);
  }

  it("the interviewer signs in, imports the demo pull request, waits for it and invites a candidate", { timeout: 360_000 }, async () => {
    const page = interviewer;
    await pageLoad(
      page,
      "the console's tasks, signed in",
      async () => {
        await page.goto(`${inject("apiUrl")}/`);
        await signIn(page, INTERVIEWER);
      },
      page.getByRole("heading", { name: "Tasks", exact: true }),
    );
    await page.getByLabel("Pull request URL").fill(`${inject("repohostUrl")}/${REPO}/pull/1`);
    await humanPause(page);
    await pageLoad(page, "a task being imported", () => page.getByRole("button", { name: "Import", exact: true }).click(), page.locator("h1 .badge"));
    taskId = new URL(page.url()).pathname.split("/").pop()!;
    // A person watches the import finish on the page (the notification, polls as the fallback).
    await page.locator("h1 .badge", { hasText: "READY" }).waitFor({ timeout: 240_000 });
    await humanPause(page);

    await page.getByLabel("Candidate's e-mail address").fill(CANDIDATE.email);
    await humanPause(page);
    await page.getByRole("button", { name: "Invite", exact: true }).click();
    await page.getByText(`Invitation to ${CANDIDATE.email} queued for sending.`).waitFor({ timeout: STEP_MS });
    await humanPause(page);
  });

  it("the candidate follows the e-mail's link, accepts, starts, edits, runs the tests and submits", { timeout: 420_000 }, async () => {
    const page = candidate;
    const token = await poll("the invitation's e-mail", () => invitationToken(inject("outboxDir"), CANDIDATE.email), { timeoutMs: 30_000, intervalMs: 250 });
    await pageLoad(
      page,
      "the invitation's link, signed in",
      async () => {
        await page.goto(`${inject("apiUrl")}/invites/accept?token=${encodeURIComponent(token)}`);
        await signIn(page, CANDIDATE);
      },
      page.getByRole("heading", { name: /You have joined/ }),
    );
    await pageLoad(page, "the attempt, not started", () => page.getByRole("button", { name: "Open the task" }).click(), page.getByRole("button", { name: /^Start/ }));
    attemptId = new URL(page.url()).pathname.split("/").pop()!;

    await page.getByRole("button", { name: /^Start/ }).click();
    await page.getByRole("tree", { name: "Files" }).waitFor({ timeout: STEP_MS });
    await humanPause(page);
    const src = page.getByRole("treeitem", { name: /^src/ });
    if ((await src.getAttribute("aria-expanded")) === "false") await src.click();
    await humanPause(page);
    await page.getByRole("treeitem", { name: /^slugify\.js/ }).click();
    await page.locator(".cm-content", { hasText: "COMBINING_MARKS" }).waitFor({ timeout: STEP_MS });
    await humanPause(page);
    // The answer pasted in from where it was written, then a line typed at a person's speed.
    await page.locator(".cm-content").click();
    await page.keyboard.press("Control+a");
    await page.keyboard.insertText(slugifyAt("head"));
    await page.keyboard.press("Control+End");
    await page.keyboard.type("// keeps whole words", { delay: 120 });
    await page.getByText("All changes saved").waitFor({ timeout: STEP_MS });
    await humanPause(page);

    await page.getByRole("tab", { name: /tests/i }).click();
    await humanPause(page);
    await page.getByRole("button", { name: "Run tests" }).click();
    const detail = page.locator(".run-detail[aria-busy='false']");
    await poll("the run's results", async () => ((await detail.count()) > 0 && /\b[1-9]\d* passed, 0 failed\b/.test(await detail.innerText()) ? true : undefined), {
      timeoutMs: 180_000,
      intervalMs: 250,
    });
    await humanPause(page);

    await page.getByRole("button", { name: "Submit…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Your account of the work (optional)").fill(EXPLANATION);
    await humanPause(page);
    await dialog.getByRole("button", { name: "Submit, final" }).click();
    await page.getByText(/You submitted this attempt/).first().waitFor({ timeout: STEP_MS });
    await humanPause(page);
    await pageLoad(page, "my assessments", () => page.getByRole("link", { name: "My assessments" }).click(), page.getByRole("heading", { name: "Your assessments", level: 1 }));
  });

  it("the interviewer opens the report from the bell, the replay, analytics, back and forward, and the task's candidates", { timeout: 420_000 }, async () => {
    const page = interviewer;
    // A person waits for the bell; scoring takes its minute.
    await staffReport(await staffClient(), attemptId, 300_000);
    const bell = page.getByRole("button", { name: /^Notifications, \d+ unread$/ });
    await bell.waitFor({ timeout: STEP_MS });
    await bell.click();
    const ready = page.getByRole("link", { name: /score report.* is ready/ });
    await ready.waitFor({ timeout: STEP_MS });
    await humanPause(page);
    await pageLoad(page, "the score report, from the bell", () => ready.click(), page.locator(".diff-view .cm-changedLine"));
    await page.locator("p.lead", { hasText: CANDIDATE.email }).waitFor();
    await page.getByLabel("Side by side").check();
    await page.locator(".diff-view .cm-mergeView").first().waitFor({ timeout: STEP_MS });
    await humanPause(page);

    await pageLoad(page, "the replay", () => page.getByRole("link", { name: "Replay of the attempt" }).click(), page.getByRole("slider", { name: "Position in the timeline" }));
    const scrubber = page.getByRole("slider", { name: "Position in the timeline" });
    await scrubber.focus();
    await page.keyboard.press("End");
    await humanPause(page);
    await pageLoad(page, "analytics", () => page.getByRole("link", { name: "Analytics", exact: true }).click(), page.getByRole("heading", { name: /funnel/i }));
    await pageLoad(page, "the replay, back", () => page.goBack(), page.getByRole("slider", { name: "Position in the timeline" }));
    await pageLoad(page, "the score report, back", () => page.goBack(), page.locator(".diff-view .cm-changedLine"));
    await pageLoad(page, "the replay, forward", () => page.goForward(), page.getByRole("slider", { name: "Position in the timeline" }));
    await pageLoad(page, "the console's tasks", () => page.getByRole("link", { name: "Tasks", exact: true }).click(), page.getByRole("link", { name: /maxLength/ }));
    await pageLoad(page, "the task with its candidates", () => page.getByRole("link", { name: /maxLength/ }).first().click(), page.getByRole("cell", { name: CANDIDATE.email }));
    expect(new URL(page.url()).pathname).toBe(`/console/tasks/${taskId}`);
  });

  it("the candidate opens their score from the bell, and reloads it", { timeout: 180_000 }, async () => {
    const page = candidate;
    const bell = page.getByRole("button", { name: /^Notifications, \d+ unread$/ });
    await bell.waitFor({ timeout: STEP_MS });
    await bell.click();
    const ready = page.getByRole("link", { name: /^Your score report.* is ready/ });
    await ready.waitFor({ timeout: STEP_MS });
    await humanPause(page);
    const score = page.getByRole("tabpanel", { name: "Your score" }).getByText(/Overall \d+(\.\d+)? of 100/);
    const file = page.locator(".cm-content .cm-line").first();
    await pageLoad(page, "the candidate's score, from the bell", () => ready.click(), score);
    await file.waitFor({ timeout: STEP_MS });
    await pageLoad(page, "the candidate's score, reloaded", () => page.reload(), score);
    await file.waitFor({ timeout: STEP_MS });
  });

  it("met no 429 anywhere, and every page loaded with at most two API calls", () => {
    const busiest = (windowMs: number) => Math.max(...traffic.calls.map((c) => traffic.calls.filter((d) => d.startedAt >= c.startedAt && d.startedAt < c.startedAt + windowMs).length));
    console.log(
      [
        `${traffic.calls.length} API calls from one address; at most ${busiest(10_000)} in 10 s (burst limit 20), ${busiest(60_000)} in a minute (general limit 60)`,
        "page loads (API calls counted; not counted):",
        ...loads.map((l) => `  ${l.name}: ${l.counted.length} [${l.counted.join(", ")}]${l.notCounted.length ? `; ${l.notCounted.join(", ")}` : ""}`),
      ].join("\n"),
    );
    expect(traffic.refused).toEqual([]);
    expect(traffic.calls.filter((c) => c.status === 429)).toEqual([]);
    expect(loads.length).toBe(15);
    expect(loads.filter((l) => l.counted.length > PAGE_LOAD_BUDGET).map((l) => `${l.name}: ${l.counted.join(", ")}`)).toEqual([]);
    // Every page reads something: a load seen with no call would be one the count missed.
    expect(loads.filter((l) => l.counted.length === 0).map((l) => l.name)).toEqual([]);
    // The document's boot asks who is signed in once per document, not once per page.
    const documents = loads.filter((l) => /signed in|reloaded/.test(l.name)).length;
    expect(loads.flatMap((l) => l.notCounted).filter((c) => c.startsWith("GET /api/v1/me ")).length).toBeLessThanOrEqual(documents);
  });
});

// ---- fast typing, a deleted file, and what the API kept ----------------------------------------

/** What the API answered a telemetry batch with (202). */
interface BatchAnswer {
  ignored: number;
  refused: { event_id: string }[];
}

describe("saves and telemetry under fast typing and a deleted file, against the API's records (npm start)", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => browser?.close());

  it("typing fast saves at most once per debounce window with one save in flight, saves exactly what was typed, and no telemetry is refused or lost across a deletion", { timeout: 420_000 }, async () => {
    // A task of the organization, and a candidate invited, accepted and started through the API.
    const staff = await staffClient();
    const listed = await ok(staff.GET("/api/v1/tasks", { params: { query: { limit: 20 } } }));
    const taskId = listed.items.find((t) => t.organization_id === ORG && t.status === "READY")?.task_id ?? (await importDemo(staff));
    await invite(staff, taskId, TYPIST.email);
    const typist = await candidateClient(TYPIST);
    await accept(typist, await poll("the invitation's e-mail", () => invitationToken(inject("outboxDir"), TYPIST.email), { timeoutMs: 30_000, intervalMs: 250 }));
    const attempt = await createAttempt(typist, taskId);
    await start(typist, attempt.id);
    const path = { attempt_id: attempt.id };

    const traffic = new Traffic(inject("apiUrl"));
    const page = traffic.watch(await (await userContext(browser)).newPage());
    await traffic.readTelemetry(page);
    page.on("dialog", (dialog) => void dialog.accept());
    await page.goto(`${inject("apiUrl")}/attempts/${attempt.id}`);
    await signInAtDevProvider(page, inject("idpUrl"), TYPIST, STEP_MS);
    await page.getByRole("tree", { name: "Files" }).waitFor({ timeout: STEP_MS });
    const saves = () => traffic.calls.filter((c) => c.method === "PATCH" && c.path === `/api/v1/attempts/${attempt.id}/changes`);
    const saved = page.getByText("All changes saved");
    let typedKeys = 0;
    /** Types `text` into the editor's focused file as fast as keys go (bracket-free: nothing is inserted but what is typed). */
    const typeFast = async (text: string) => {
      await page.keyboard.type(text, { delay: 15 });
      typedKeys += text.length;
    };
    const newFile = async (name: string) => {
      await page.getByRole("button", { name: "New file" }).click();
      await page.getByLabel("Path of the new file").fill(name);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name }).waitFor();
    };

    // Typing fast for longer than the longest wait between saves (10 s): saves while typing goes on, and after it.
    await newFile("fast.js");
    const firstSave = saves().length;
    let typed = "";
    const typingStarted = Date.now();
    for (let i = 1; Date.now() - typingStarted < 13_000; i++) {
      const words = `let v${i} = ${i}; `;
      await typeFast(words);
      typed += words;
    }
    await saved.waitFor({ timeout: STEP_MS });
    const typingSaves = saves().slice(firstSave);
    console.log(`${typed.length} characters typed in 13 s; saves ${typingSaves.map((c) => c.startedAt - typingStarted).join(", ")} ms after typing began`);
    expect(typingSaves.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < typingSaves.length; i++) {
      const [before, after] = [typingSaves[i - 1]!, typingSaves[i]!];
      expect(after.startedAt - before.startedAt, `save ${i} after save ${i - 1}`).toBeGreaterThanOrEqual(DEBOUNCE_MS - REPORTING_SLACK_MS);
      // One in flight: each save starts after the one before it has been answered.
      expect(before.endSeq, `save ${i - 1} ended before save ${i} began`).toBeLessThan(after.startSeq);
    }
    expect(typingSaves.map((s) => s.status)).toEqual(typingSaves.map(() => 200));
    const fastContent = async () => {
      const file = await ok(typist.GET("/api/v1/attempts/{attempt_id}/files/content", { params: { path, query: { path: "fast.js" } } }));
      return Buffer.from(file.content_b64, "base64").toString("utf8");
    };
    expect(await fastContent()).toBe(typed);

    // A file created, typed into, saved, typed into again once the API knows it, saved, deleted; then typing goes on in another.
    await newFile("gone.js");
    await typeFast("let gone = 1; ");
    await saved.waitFor({ timeout: STEP_MS });
    await typeFast("let still = 2; ");
    await saved.waitFor({ timeout: STEP_MS });
    await page.getByRole("button", { name: "Delete file" }).click();
    // Counted from once the tree marks the file deleted: a batch that left while the click was on its way is not "after".
    await page.getByRole("treeitem", { name: /^gone\.js \(deleted/ }).waitFor({ timeout: STEP_MS });
    const deletedAt = traffic.calls.length;
    await page.getByRole("treeitem", { name: /^fast\.js/ }).click();
    await page.locator(".cm-content", { hasText: "let v1 = 1;" }).waitFor({ timeout: STEP_MS });
    await page.locator(".cm-content").click();
    await page.keyboard.press("Control+End");
    const later = "let after = 3; let more = 4; ";
    await typeFast(later);
    typed += later;
    // A telemetry batch after the deletion carries the typing in fast.js.
    const eventsOf = (batches: SentBatch[]) => batches.flatMap((b) => b.events);
    await poll(
      "a telemetry batch after the deletion with the typing in fast.js",
      async () =>
        eventsOf((await traffic.sentBatches(deletedAt)).filter((b) => b.call.status === 202)).some((e) => e.kind === "typing_window" && e.file_path === "fast.js") ? true : undefined,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await saved.waitFor({ timeout: STEP_MS });
    // Leaving the workspace sends what telemetry still holds (the open typing window among it):
    // waited for until every key typed is in a batch sent, or the assertions below say what is missing.
    await page.getByRole("link", { name: "My assessments" }).click();
    await page.getByRole("heading", { name: "Your assessments", level: 1 }).waitFor({ timeout: STEP_MS });
    await poll("every key typed sent in telemetry", async () => (traffic.inFlight(page) === 0 && keysIn(eventsOf(await traffic.sentBatches())) === typedKeys ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
    }).catch(() => undefined);

    // The saves: one in flight at any time, the deletion kept, and fast.js holds exactly what was typed.
    const all = saves();
    expect(all.flatMap((save, i) => (i > 0 && (all[i - 1]!.endSeq ?? Infinity) > save.startSeq ? [`save ${i} began before save ${i - 1} ended`] : []))).toEqual([]);
    const files = await ok(typist.GET("/api/v1/attempts/{attempt_id}/files", { params: { path } }));
    expect(files.items.map((f) => f.path)).toContain("fast.js");
    expect(files.items.map((f) => f.path)).not.toContain("gone.js");
    expect(await fastContent()).toBe(typed);

    // The telemetry: every batch taken whole, no event naming the deleted file after its deletion, every key counted.
    const batches = await traffic.sentBatches();
    expect(batches.map((b) => b.call.status)).toEqual(batches.map(() => 202));
    const answers = (await Promise.all(batches.map((b) => b.call.answer))) as BatchAnswer[];
    expect(answers.flatMap((a) => a.refused)).toEqual([]);
    expect(answers.map((a) => a.ignored)).toEqual(answers.map(() => 0));
    expect(eventsOf(await traffic.sentBatches(deletedAt)).filter((e) => e.file_path === "gone.js")).toEqual([]);
    const sent = new Map(eventsOf(batches).map((e) => [e.event_id, e]));
    expect(keysIn([...sent.values()])).toBe(typedKeys);
    console.log(`${batches.length} telemetry batches, ${sent.size} events, ${typedKeys} keys`);

    // What the API stored, as the reviewer's timeline counts it per minute and kind: every event sent.
    const expected = perMinute([...sent.values()]);
    const reviewer = await staffClient();
    const stored = await pollApi(
      "the timeline's telemetry to hold every event sent",
      async () => {
        const counts = await timelineTelemetry(reviewer, attempt.id);
        return JSON.stringify(counts) === JSON.stringify(expected) ? counts : undefined;
      },
      60_000,
    ).catch(async () => timelineTelemetry(reviewer, attempt.id));
    expect(stored).toEqual(expected);
    await page.context().close();
  });
});

/** Imports the demo pull request into the organization, when the journey did not leave a READY task. */
async function importDemo(staff: AssayClient): Promise<string> {
  const created = await ok(staff.POST("/api/v1/tasks/import-pr", { body: { pr_url: `${inject("repohostUrl")}/${REPO}/pull/1`, organization_id: ORG } }));
  await pollApi(`task ${created.task_id}`, async () => {
    const task = await ok(staff.GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: created.task_id } } }));
    if (task.status === "FAILED") throw new Error(`the demo task failed: ${task.failure_reason}`);
    return task.status === "READY" ? task : undefined;
  });
  return created.task_id;
}

/** The keys the typing windows among `events` counted, each event once however often it was sent. */
function keysIn(events: SentEvent[]): number {
  const once = new Map(events.map((e) => [e.event_id, e]));
  return [...once.values()].reduce((n, e) => n + (e.kind === "typing_window" ? (e.keystrokes ?? 0) : 0), 0);
}

type MinuteCounts = Record<string, Record<string, number>>;

/** Events counted as the timeline counts them: per minute of `occurred_at` (UTC), per kind; keys sorted. */
function perMinute(events: SentEvent[]): MinuteCounts {
  const counts: MinuteCounts = {};
  for (const event of events) {
    const minute = new Date(Math.floor(Date.parse(event.occurred_at) / 60_000) * 60_000).toISOString();
    const kinds = (counts[minute] ??= {});
    kinds[event.kind] = (kinds[event.kind] ?? 0) + 1;
  }
  return sorted(counts);
}

function sorted(counts: MinuteCounts): MinuteCounts {
  return Object.fromEntries(
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([minute, kinds]) => [minute, Object.fromEntries(Object.entries(kinds).sort(([a], [b]) => a.localeCompare(b)))]),
  );
}

/** The telemetry minutes of the attempt's timeline, whole (every page), as counts per minute and kind. */
async function timelineTelemetry(reviewer: AssayClient, attemptId: string): Promise<MinuteCounts> {
  const counts: MinuteCounts = {};
  let cursor: string | undefined;
  do {
    const page = await ok(
      reviewer.GET("/api/v1/attempts/{attempt_id}/evaluation/timeline", { params: { path: { attempt_id: attemptId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }),
    );
    for (const event of page.items) {
      if (event.type === "telemetry") counts[new Date(event.at).toISOString()] = { ...event.counts };
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return sorted(counts);
}
