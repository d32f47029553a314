import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AI_CHAT_LIMITS, LOCAL_ANSWER_PREFIX, LOCAL_MODEL, SseParser, SYSTEM_INSTRUCTIONS } from "../../src/domain/ai-chat";
import { taskKeys } from "../../src/domain/tasks";
import {
  assignedTask,
  attemptStub,
  createAttempt,
  openIdeSession,
  signIn,
  startedAttempt,
  submit,
  type TestUser,
} from "../support/worker/attempts";
import { call, errorBody } from "../support/worker/client";

const messages = (attemptId: string) => `/api/v1/attempts/${attemptId}/ai-chat/messages`;

interface ChatMessageJson {
  message_id: string;
  attempt_id: string;
  seq: number;
  role: "user" | "assistant";
  content: string;
  status: "complete" | "error";
  error: string | null;
  files: { path: string; bytes: number }[];
  reply_to: string | null;
  provider: string | null;
  model: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; estimated: boolean } | null;
  timing: { first_token_at: string | null; ended_at: string; first_token_ms: number | null; total_ms: number } | null;
  created_at: string;
}
interface ChatEvent {
  event: string;
  data: { type: string; text?: string; detail?: string; message?: ChatMessageJson | null; answer_id?: string; provider?: string; model?: string };
}
interface MessagePage {
  items: ChatMessageJson[];
  pagination: { total: number; pages: number; current: number; limit: number };
}

const send = (token: string | undefined, attemptId: string, body: unknown) => call(messages(attemptId), { method: "POST", token, body });

/** The events of a streamed answer, read to the end of the body. */
async function events(res: Response): Promise<ChatEvent[]> {
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  const parser = new SseParser();
  const text = await res.text();
  return [...parser.feed(text), ...parser.end()].map((m) => ({ event: m.event, data: JSON.parse(m.data) as ChatEvent["data"] }));
}

/** A message that went through: its events, checked for the start, deltas, end shape. */
async function exchange(token: string, attemptId: string, body: unknown = { message: "How should I start?" }) {
  const all = await events(await send(token, attemptId, body));
  const deltas = all.filter((e) => e.event === "delta").map((e) => e.data.text ?? "");
  return { all, start: all[0] as ChatEvent, deltas, end: all.at(-1) as ChatEvent };
}

async function listed(token: string, attemptId: string, query = ""): Promise<MessagePage> {
  const res = await call(`${messages(attemptId)}${query}`, { token });
  expect(res.status).toBe(200);
  return (await res.json()) as MessagePage;
}

async function enableAi(interviewer: TestUser, taskId: string, on = true) {
  const res = await call(`/api/v1/tasks/${taskId}`, { method: "PATCH", token: interviewer.token, body: { ai_assistance: on } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { ai_assistance: boolean }).ai_assistance).toBe(on);
}

/** An attempt in progress on a task that allows AI assistance. */
async function chatAttempt() {
  const setup = await startedAttempt();
  await enableAi(setup.interviewer, setup.taskId);
  return setup;
}

async function ideToken(user: TestUser, attemptId: string): Promise<string> {
  const res = await openIdeSession(user, attemptId);
  expect(res.status).toBe(201);
  return ((await res.json()) as { session_token: string }).session_token;
}

/** Runs `fn` with the Worker's AI settings changed (the tests share the Worker's env), restoring them after. */
async function withAiEnv<T>(changes: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
  const mutable = env as unknown as Record<string, unknown>;
  const before = Object.fromEntries(Object.keys(changes).map((k) => [k, mutable[k]]));
  Object.assign(mutable, changes);
  try {
    return await fn();
  } finally {
    Object.assign(mutable, before);
  }
}

/** Plays an OpenAI-compatible endpoint at AI_OPENAI_URL: records what it is sent, answers with `answer`. */
function fakeOpenAi(answer: () => Response) {
  const realFetch = globalThis.fetch;
  const sent: { url: string; body: { model: string; messages: { role: string; content: string }[]; stream: boolean } }[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(env.AI_OPENAI_URL ?? "-")) return realFetch(request);
    sent.push({ url: request.url, body: await request.json() });
    return answer();
  });
  return sent;
}
afterEach(() => vi.restoreAllMocks());

const sseData = (value: unknown) => `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
const delta = (content: string) => sseData({ choices: [{ index: 0, delta: { content } }] });

describe("POST .../ai-chat/messages", () => {
  it("streams the answer: start with the stored message, several deltas, done with the stored answer", async () => {
    const { candidate, attempt } = await chatAttempt();
    const { all, start, deltas, end } = await exchange(candidate.token, attempt.id, { message: "  How do I cut at a word boundary?  " });
    expect(all.map((e) => e.event)).toEqual(["start", ...deltas.map(() => "delta"), "done"]);
    expect(all.every((e) => e.data.type === e.event)).toBe(true);
    expect(deltas.length).toBeGreaterThanOrEqual(3);

    const question = start.data.message as ChatMessageJson;
    expect(question).toMatchObject({ attempt_id: attempt.id, role: "user", seq: 2, content: "How do I cut at a word boundary?", status: "complete", files: [], usage: null, timing: null });
    expect(start.data).toMatchObject({ provider: "local", model: LOCAL_MODEL });

    const answer = end.data.message as ChatMessageJson;
    expect(answer.message_id).toBe(start.data.answer_id);
    expect(answer).toMatchObject({ role: "assistant", seq: 3, status: "complete", error: null, reply_to: question.message_id, provider: "local", model: LOCAL_MODEL });
    expect(answer.content).toBe(deltas.join(""));
    expect(answer.content.startsWith(LOCAL_ANSWER_PREFIX)).toBe(true);
    expect(answer.content).toContain('You asked: "How do I cut at a word boundary?"');
    expect(answer.usage).toMatchObject({ estimated: true });
    expect(answer.usage?.prompt_tokens).toBeGreaterThan(SYSTEM_INSTRUCTIONS.length / 4);
    expect(answer.usage?.completion_tokens).toBe(Math.ceil(answer.content.length / 4));
    expect(answer.timing?.total_ms).toBeGreaterThanOrEqual(0);
    expect(answer.timing?.first_token_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(answer.timing?.ended_at ?? "")).toBeGreaterThanOrEqual(Date.parse(answer.created_at));

    expect((await listed(candidate.token, attempt.id)).items).toEqual([question, answer]);
  });

  it("continues the conversation: earlier messages go into the prompt, and the shared files with the message", async () => {
    const { candidate, attempt } = await chatAttempt();
    await exchange(candidate.token, attempt.id, { message: "first" });
    const second = await exchange(candidate.token, attempt.id, {
      message: "second",
      files: [{ path: "src/slugify.js", content: "export const slugify = (s) => s;\n" }],
    });
    const answer = second.end.data.message as ChatMessageJson;
    expect(answer.content).toContain("2 earlier messages");
    expect(answer.content).toContain("the shared file src/slugify.js.");
    expect((second.start.data.message as ChatMessageJson).files).toEqual([{ path: "src/slugify.js", bytes: 33 }]);
    const page = await listed(candidate.token, attempt.id);
    expect(page.items.map((m) => [m.seq, m.role])).toEqual([[2, "user"], [3, "assistant"], [4, "user"], [5, "assistant"]]);
  });

  it(`takes exactly ${AI_CHAT_LIMITS.messagesPerWindow} messages a minute per attempt, counted exactly; beyond, 429 with Retry-After`, async () => {
    const { candidate, attempt } = await chatAttempt();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => send(candidate.token, attempt.id, { message: `message ${i}` })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429]);
    for (const res of results.filter((r) => r.status === 429)) {
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(55);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect((await errorBody(res)).detail).toMatch(/has sent 10 AI chat messages in the last 60 seconds; at most 10 may be/);
    }
    await Promise.all(results.filter((r) => r.status === 200).map((r) => events(r)));
    expect((await listed(candidate.token, attempt.id)).pagination.total).toBe(20);

    // Another attempt has a window of its own.
    const other = await chatAttempt();
    expect((await send(other.candidate.token, other.attempt.id, { message: "mine" })).status).toBe(200);

    // The window slides: once the oldest message is a minute old, one more is taken, and no more.
    await runInDurableObject(attemptStub(attempt.id), (_instance, state) => {
      const oldest = state.storage.sql.exec<{ turn: number }>("SELECT MIN(turn) AS turn FROM ai_chat_sends").one().turn;
      state.storage.sql.exec("UPDATE ai_chat_sends SET at_ms = at_ms - ? WHERE turn = ?", AI_CHAT_LIMITS.windowMs, oldest);
    });
    const freed = await exchange(candidate.token, attempt.id, { message: "after a minute" });
    expect((freed.start.data.message as ChatMessageJson).seq).toBe(2 * 11);
    expect((await send(candidate.token, attempt.id, { message: "one too many" })).status).toBe(429);
  });

  it("403 when the task does not allow AI assistance (the default), and nothing is counted", async () => {
    const { interviewer, candidate, attempt, taskId } = await startedAttempt();
    const task = (await (await call(`/api/v1/tasks/${taskId}`, { token: candidate.token })).json()) as { ai_assistance: boolean };
    expect(task.ai_assistance).toBe(false);
    const res = await send(candidate.token, attempt.id, { message: "help" });
    expect(res.status).toBe(403);
    expect((await errorBody(res)).detail).toMatch(/does not allow AI assistance/);
    expect((await listed(candidate.token, attempt.id)).pagination.total).toBe(0);

    await enableAi(interviewer, taskId);
    await exchange(candidate.token, attempt.id);
    await enableAi(interviewer, taskId, false);
    expect((await send(candidate.token, attempt.id, { message: "again" })).status).toBe(403);
  });

  it("409 unless the attempt is IN_PROGRESS: before the start, and after the submission", async () => {
    const { interviewer, candidate, taskId } = await assignedTask();
    await enableAi(interviewer, taskId);
    const attempt = await createAttempt(candidate, taskId);
    const early = await send(candidate.token, attempt.id, { message: "hello" });
    expect(early.status).toBe(409);
    expect((await errorBody(early)).detail).toMatch(/has not been started; start it before using AI chat/);

    expect((await call(`/api/v1/attempts/${attempt.id}/start`, { method: "POST", token: candidate.token })).status).toBe(200);
    await exchange(candidate.token, attempt.id);
    expect((await submit(candidate.token, attempt.id)).status).toBe(202);
    const late = await send(candidate.token, attempt.id, { message: "one more" });
    expect(late.status).toBe(409);
    expect((await errorBody(late)).detail).toMatch(/is locked: it was submitted/);
    expect((await listed(candidate.token, attempt.id)).pagination.total).toBe(2);
  });

  it("takes the attempt's IDE session token; refuses another attempt's (401), a revoked one (401), and no credential (401)", async () => {
    const a = await chatAttempt();
    const b = await chatAttempt();
    const tokenA = await ideToken(a.candidate, a.attempt.id);
    const tokenB = await ideToken(b.candidate, b.attempt.id);

    const viaIde = await exchange(tokenA, a.attempt.id, { message: "from the IDE" });
    expect(viaIde.end.event).toBe("done");
    expect((await listed(tokenA, a.attempt.id)).items.map((m) => m.content)).toContain("from the IDE");

    for (const [method, body] of [["POST", { message: "hi" }], ["GET", undefined]] as const) {
      const other = await call(messages(a.attempt.id), { method, token: tokenB, body });
      expect(other.status, method).toBe(401);
      expect((await errorBody(other)).detail).toMatch(/another attempt/);
      expect((await call(messages(a.attempt.id), { method, body })).status, method).toBe(401);
    }

    expect((await call(`/api/v1/attempts/${a.attempt.id}/ide-session/${tokenA}`, { method: "DELETE", token: a.candidate.token })).status).toBe(204);
    expect((await send(tokenA, a.attempt.id, { message: "revoked" })).status).toBe(401);
    expect((await listed(a.candidate.token, a.attempt.id)).pagination.total).toBe(2);
  });

  it("422 for bad bodies, every problem at once, before anything is counted", async () => {
    const { candidate, attempt } = await chatAttempt();
    const file = (path: string, content = "x") => ({ path, content });
    const cases: [unknown, string[]][] = [
      [{ message: "" }, ["body.message"]],
      [{ message: "   \n " }, ["body.message"]],
      [{}, ["body.message"]],
      [{ message: "x".repeat(AI_CHAT_LIMITS.messageChars + 1) }, ["body.message"]],
      [{ message: "hi", files: Array.from({ length: AI_CHAT_LIMITS.files + 1 }, (_, i) => file(`f${i}.js`)) }, ["body.files"]],
      [{ message: "hi", files: [file("a.js", "é".repeat(AI_CHAT_LIMITS.filesBytes / 2)), file("b.js")] }, ["body.files"]],
      [{ message: "hi", files: [file("a.js"), file("a.js")] }, ["body.files"]],
      [{ message: "hi", files: [file("../etc/passwd")] }, ["body.files.0.path"]],
      [{ message: "hi", files: [{ path: "a.js" }] }, ["body.files.0.content"]],
      [{ message: "hi", model: "gpt-4" }, ["body.model"]],
      [{ message: 7, files: "all" }, ["body.message", "body.files"]],
    ];
    for (const [body, locs] of cases) {
      const res = await send(candidate.token, attempt.id, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      const { detail } = (await errorBody(res)) as { detail: { loc: (string | number)[] }[] };
      expect(detail.map((d) => d.loc.join(".")).sort(), JSON.stringify(body).slice(0, 80)).toEqual(locs.sort());
    }
    expect((await listed(candidate.token, attempt.id)).pagination.total).toBe(0);
  });

  it("503 when the deployment has no provider (no AI binding), before anything is counted", async () => {
    const { candidate, attempt } = await chatAttempt();
    const res = await withAiEnv({ AI_PROVIDER: "workers-ai", AI: undefined }, () => send(candidate.token, attempt.id, { message: "hi" }));
    expect(res.status).toBe(503);
    expect((await errorBody(res)).detail).toMatch(/AI provider is not configured/);
    expect((await listed(candidate.token, attempt.id)).pagination.total).toBe(0);
  });

  it("answers through the Workers AI binding with the model named in AI_MODEL, and keeps its usage", async () => {
    const { candidate, attempt } = await chatAttempt();
    const runs: [string, Record<string, unknown>][] = [];
    const ai = {
      async run(model: string, inputs: Record<string, unknown>) {
        runs.push([model, inputs]);
        const body = sseData({ response: "Try " }) + sseData({ response: "logging it." }) + sseData({ response: "", usage: { prompt_tokens: 321, completion_tokens: 4 } }) + sseData("[DONE]");
        return new Response(body).body;
      },
    };
    const { deltas, end } = await withAiEnv({ AI_PROVIDER: "workers-ai", AI: ai }, () => exchange(candidate.token, attempt.id));
    expect(deltas).toEqual(["Try ", "logging it."]);
    expect(end.data.message).toMatchObject({ content: "Try logging it.", provider: "workers-ai", model: env.AI_MODEL, usage: { prompt_tokens: 321, completion_tokens: 4, estimated: false } });
    expect(runs[0]?.[0]).toBe(env.AI_MODEL);
    expect(runs[0]?.[1]).toMatchObject({ stream: true, max_tokens: AI_CHAT_LIMITS.replyMaxTokens });
  });

  it("a provider failing mid-stream: an error event, the answer stored with what came, the message still counted", async () => {
    const { candidate, attempt } = await chatAttempt();
    const sent = fakeOpenAi(() => {
      let step = 0;
      return new Response(
        new ReadableStream({
          pull(controller) {
            step += 1;
            if (step === 1) controller.enqueue(new TextEncoder().encode(delta("Start by ") + delta("reading ")));
            else controller.error(new Error("connection reset"));
          },
        }),
      );
    });
    const { all, deltas, end } = await withAiEnv({ AI_PROVIDER: "openai" }, () => exchange(candidate.token, attempt.id));
    expect(sent).toHaveLength(1);
    expect(deltas).toEqual(["Start by ", "reading "]);
    expect(all.map((e) => e.event)).toEqual(["start", "delta", "delta", "error"]);
    expect(end.data.detail).toMatch(/stream broke: connection reset/);
    const stored = end.data.message as ChatMessageJson;
    expect(stored).toMatchObject({ role: "assistant", status: "error", content: "Start by reading ", provider: "openai", error: end.data.detail });

    fakeOpenAi(() => Response.json({ error: { message: "Incorrect API key provided: sk-****" } }, { status: 401 }));
    const refused = await withAiEnv({ AI_PROVIDER: "openai" }, () => exchange(candidate.token, attempt.id, { message: "again" }));
    expect(refused.all.map((e) => e.event)).toEqual(["start", "error"]);
    expect(refused.end.data.detail).toBe("the AI provider answered HTTP 401");
    expect(refused.end.data.message).toMatchObject({ status: "error", content: "", error: "the AI provider answered HTTP 401" });

    const page = await listed(candidate.token, attempt.id);
    expect(page.items.map((m) => [m.role, m.status])).toEqual([
      ["user", "complete"],
      ["assistant", "error"],
      ["user", "complete"],
      ["assistant", "error"],
    ]);
    const window = await runInDurableObject(attemptStub(attempt.id), (_i, state) => state.storage.sql.exec("SELECT * FROM ai_chat_sends").toArray().length);
    expect(window).toBe(2);
  });
});

describe("what the provider is given", () => {
  const HIDDEN_TEST = "assert.equal(slugify('a b', { maxLength: 1 }), 'a') // HIDDEN-TEST-MARKER";
  const GOLD = "+  return cutAtWord(slug, maxLength); // GOLD-PATCH-MARKER";

  it("the statement, the message and the shared files; never the hidden tests, the test patch or the gold patch", async () => {
    const { candidate, attempt, taskId } = await chatAttempt();
    await env.BUCKET.put(taskKeys(taskId).testPatch, `diff --git a/test/slugify.test.js b/test/slugify.test.js\n+${HIDDEN_TEST}\n`);
    await env.BUCKET.put(taskKeys(taskId).solutionPatch, `diff --git a/src/slugify.js b/src/slugify.js\n${GOLD}\n`);
    const sent = fakeOpenAi(() => new Response(delta("Think about word boundaries.") + sseData("[DONE]")));

    const shared = { path: "src/slugify.js", content: "export function slugify(s, opts) { return s; }\n" };
    const ok = await withAiEnv({ AI_PROVIDER: "openai" }, () => exchange(candidate.token, attempt.id, { message: "Which tests will you run on this?", files: [shared] }));
    expect(ok.end.event).toBe("done");
    expect(sent).toHaveLength(1);
    const { url, body } = sent[0] as (typeof sent)[number];
    expect(url).toBe(`${env.AI_OPENAI_URL}/chat/completions`);
    expect(body.stream).toBe(true);
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(body.messages[0]?.content).toContain(SYSTEM_INSTRUCTIONS);
    expect(body.messages[0]?.content).toContain("# Fix the bug");
    expect(body.messages[1]?.content).toContain("Which tests will you run on this?");
    expect(body.messages[1]?.content).toContain(shared.content);

    const task = await env.DB.prepare("SELECT fail_to_pass, pass_to_pass, test_files FROM tasks WHERE id = ?").bind(taskId).first<Record<string, string>>();
    const forbidden = [
      HIDDEN_TEST,
      "HIDDEN-TEST-MARKER",
      "GOLD-PATCH-MARKER",
      "test/slugify.test.js",
      ...(JSON.parse(task?.fail_to_pass ?? "[]") as string[]),
      ...(JSON.parse(task?.pass_to_pass ?? "[]") as string[]),
      ...(JSON.parse(task?.test_files ?? "[]") as string[]),
    ];
    expect(forbidden.length).toBeGreaterThan(4);
    const prompt = JSON.stringify(body);
    for (const text of forbidden) expect(prompt, text).not.toContain(text);

    // Sharing a hidden test's path is refused before anything is sent or counted.
    const refused = await withAiEnv({ AI_PROVIDER: "openai" }, () =>
      send(candidate.token, attempt.id, { message: "Is my test right?", files: [shared, { path: "test/slugify.test.js", content: HIDDEN_TEST }] }),
    );
    expect(refused.status).toBe(422);
    const { detail } = (await errorBody(refused)) as { detail: { loc: (string | number)[]; type: string }[] };
    expect(detail).toEqual([expect.objectContaining({ loc: ["body", "files", 1, "path"], type: "hidden_test" })]);
    expect(sent).toHaveLength(1);
    expect((await listed(candidate.token, attempt.id)).pagination.total).toBe(2);
  });
});

describe("the transcript", () => {
  it("staff read it in the evaluation timeline and through GET; another candidate sees neither (404 / 403)", async () => {
    const { orgId, interviewer, candidate, attempt } = await chatAttempt();
    const first = await exchange(candidate.token, attempt.id, { message: "What does maxLength mean?" });
    await exchange(candidate.token, attempt.id, { message: "And for words?" });

    const timeline = await call(`/api/v1/attempts/${attempt.id}/evaluation/timeline`, { token: interviewer.token });
    expect(timeline.status).toBe(200);
    const items = ((await timeline.json()) as { items: { type: string; at: string; message?: ChatMessageJson }[] }).items;
    const chat = items.filter((e) => e.type === "ai_chat_message");
    expect(chat.map((e) => [e.message?.seq, e.message?.role])).toEqual([[2, "user"], [3, "assistant"], [4, "user"], [5, "assistant"]]);
    expect(chat[0]?.message?.content).toBe("What does maxLength mean?");
    expect(chat[1]?.message).toEqual(first.end.data.message);
    expect(chat.every((e) => e.at === e.message?.created_at)).toBe(true);
    expect(items.map((e) => e.type).slice(0, 2)).toEqual(["created", "started"]);

    // Paginated by cursor, the chat events come one page after another without loss or repeat.
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await call(`/api/v1/attempts/${attempt.id}/evaluation/timeline?limit=1${cursor ? `&cursor=${cursor}` : ""}`, { token: interviewer.token });
      const page = (await res.json()) as { items: { type: string; message?: ChatMessageJson }[]; next_cursor: string | null };
      seen.push(...page.items.filter((e) => e.type === "ai_chat_message").map((e) => e.message?.seq ?? -1));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([2, 3, 4, 5]);

    const orgadmin = await signIn({ role: "orgadmin", org_id: orgId });
    for (const staff of [interviewer, orgadmin]) {
      const page = await listed(staff.token, attempt.id, "?limit=3");
      expect(page.pagination).toEqual({ total: 4, pages: 2, current: 1, limit: 3 });
      expect(page.items.map((m) => m.seq)).toEqual([2, 3, 4]);
      // Staff read; they do not chat in a candidate's attempt.
      expect((await send(staff.token, attempt.id, { message: "hi" })).status).toBe(403);
    }

    const stranger = await signIn();
    expect((await call(messages(attempt.id), { token: stranger.token })).status).toBe(404);
    expect((await send(stranger.token, attempt.id, { message: "hi" })).status).toBe(404);
    expect((await call(`/api/v1/attempts/${attempt.id}/evaluation/timeline`, { token: stranger.token })).status).toBe(403);
    const otherStaff = await signIn({ role: "interviewer", org_id: `org-${crypto.randomUUID().slice(0, 8)}` });
    expect((await call(messages(attempt.id), { token: otherStaff.token })).status).toBe(404);
  });

  it("GET is paginated with the project's envelope; 422 out of range", async () => {
    const { candidate, attempt } = await chatAttempt();
    await exchange(candidate.token, attempt.id);
    const page = await listed(candidate.token, attempt.id, "?page=2&limit=1");
    expect(page.pagination).toEqual({ total: 2, pages: 2, current: 2, limit: 1 });
    expect(page.items.map((m) => m.role)).toEqual(["assistant"]);
    expect((await call(`${messages(attempt.id)}?limit=101`, { token: candidate.token })).status).toBe(422);
    expect((await call(`${messages(attempt.id)}?page=0`, { token: candidate.token })).status).toBe(422);
  });
});

describe("the OpenAPI document", () => {
  it("documents both routes, the event stream and the task setting", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }>; security?: unknown }>>;
      components: { schemas: Record<string, unknown> };
    };
    const path = doc.paths["/api/v1/attempts/{attempt_id}/ai-chat/messages"];
    expect(Object.keys(path?.post?.responses ?? {})).toEqual(expect.arrayContaining(["200", "401", "403", "404", "409", "413", "422", "429", "503"]));
    expect(Object.keys(path?.post?.responses["200"]?.content ?? {})).toEqual(["text/event-stream"]);
    expect(Object.keys(path?.get?.responses ?? {})).toEqual(expect.arrayContaining(["200", "401", "404", "422"]));
    for (const schema of ["AiChatMessage", "AiChatStartEvent", "AiChatDeltaEvent", "AiChatDoneEvent", "AiChatErrorEvent"]) {
      expect(doc.components.schemas[schema], schema).toBeDefined();
    }
    expect(JSON.stringify(doc.components.schemas.TimelineEvent)).toContain("ai_chat_message");
    expect(JSON.stringify(doc.components.schemas.Task)).toContain("ai_assistance");
  });
});
