import { describe, expect, it } from "vitest";
import {
  AI_CHAT_LIMITS,
  boundHistory,
  buildPrompt,
  chatStateRefusal,
  chatWindowRefusal,
  estimatePromptTokens,
  estimateTokens,
  LOCAL_ANSWER_PREFIX,
  localAnswer,
  sharedFileIssues,
  SseParser,
  sseEvent,
  SYSTEM_INSTRUCTIONS,
  userContent,
  type ChatTurn,
} from "../../src/domain/ai-chat";

const statement = { title: "Add maxLength to slugify", body: "Cut long slugs at a word boundary." };
const turn = (role: ChatTurn["role"], content: string): ChatTurn => ({ role, content });

describe("the window of AI chat messages", () => {
  const now = 1_000_000;
  const { messagesPerWindow, windowMs } = AI_CHAT_LIMITS;
  const times = (...agoMs: number[]) => agoMs.map((ago) => now - ago).sort((a, b) => a - b);

  it("takes the 10th message of a minute and refuses the 11th", () => {
    const nine = times(...Array.from({ length: messagesPerWindow - 1 }, (_, i) => i * 1000));
    expect(chatWindowRefusal("att_1", nine, now)).toBeUndefined();
    const ten = times(...Array.from({ length: messagesPerWindow }, (_, i) => i * 1000));
    expect(chatWindowRefusal("att_1", ten, now)).toMatchObject({ kind: "rate_limited", detail: expect.stringMatching(/att_1 has sent 10 AI chat messages/) });
  });

  it("says how long until the oldest message in the window leaves it, in whole seconds, at least 1", () => {
    const full = times(30_500, ...Array.from({ length: messagesPerWindow - 1 }, () => 1000));
    expect(chatWindowRefusal("att_1", full, now)).toMatchObject({ retryAfterSeconds: 30 });
    const justFull = times(windowMs - 1, ...Array.from({ length: messagesPerWindow - 1 }, () => 0));
    expect(chatWindowRefusal("att_1", justFull, now)).toMatchObject({ retryAfterSeconds: 1 });
    const fresh = times(...Array.from({ length: messagesPerWindow }, () => 0));
    expect(chatWindowRefusal("att_1", fresh, now)).toMatchObject({ retryAfterSeconds: 60 });
  });

  it("slides: messages a whole window old no longer count", () => {
    const old = times(windowMs, windowMs + 5, ...Array.from({ length: messagesPerWindow - 1 }, () => 10));
    expect(chatWindowRefusal("att_1", old, now)).toBeUndefined();
  });
});

describe("the attempt's state", () => {
  it("admits IN_PROGRESS only, with a 409 that says why otherwise", () => {
    expect(chatStateRefusal({ id: "att_1", status: "IN_PROGRESS", auto_submitted: false })).toBeUndefined();
    expect(chatStateRefusal({ id: "att_1", status: "NOT_STARTED", auto_submitted: false })).toMatchObject({ kind: "conflict", detail: expect.stringMatching(/not been started/) });
    expect(chatStateRefusal({ id: "att_1", status: "SUBMITTED", auto_submitted: true })).toMatchObject({ kind: "conflict", detail: expect.stringMatching(/automatically at its deadline/) });
    expect(chatStateRefusal({ id: "att_1", status: "SCORED", auto_submitted: false })).toMatchObject({ kind: "conflict", detail: expect.stringMatching(/locked/) });
  });
});

describe("shared files", () => {
  it("refuses the task's hidden tests, naming each at its place in the body", () => {
    const hidden = new Set(["test/slugify.test.js"]);
    expect(sharedFileIssues([{ path: "src/slugify.js" }, { path: "test/slugify.test.js" }], hidden)).toEqual([
      { loc: ["body", "files", 1, "path"], msg: expect.stringMatching(/hidden test/), type: "hidden_test" },
    ]);
    expect(sharedFileIssues([{ path: "test/mine.test.js" }], hidden)).toEqual([]);
  });
});

describe("the prompt", () => {
  it("is the instructions with the statement, the conversation, then the message with the shared files", () => {
    const prompt = buildPrompt({
      statement,
      language: "javascript",
      history: [turn("user", "What is a slug?"), turn("assistant", "A URL-friendly name.")],
      message: "Why does my test fail?",
      files: [{ path: "src/slugify.js", content: "export const slugify = (s) => s;\n" }],
    });
    expect(prompt.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    const system = prompt[0]?.content ?? "";
    expect(system.startsWith(SYSTEM_INSTRUCTIONS)).toBe(true);
    expect(system).toMatch(/Do not write the solution for them/);
    expect(system).toContain("# Add maxLength to slugify\n\nCut long slugs at a word boundary.");
    expect(system).toContain("main language is javascript");
    expect(prompt[3]?.content).toBe(
      "Why does my test fail?\n\nFiles I am sharing:\n\nFile src/slugify.js:\n```\nexport const slugify = (s) => s;\n\n```",
    );
  });

  it("says when there is no statement, and carries nothing but its inputs", () => {
    const prompt = buildPrompt({ statement: null, language: null, history: [], message: "hi", files: [] });
    expect(prompt).toEqual([
      { role: "system", content: `${SYSTEM_INSTRUCTIONS}\n\nThe task, as the candidate reads it:\n\n(The task statement is not available.)` },
      { role: "user", content: "hi" },
    ]);
  });

  it("fences a shared file with more backticks than it holds, so the file cannot end the fence", () => {
    const content = "Use ```js fences``` and ```` too";
    expect(userContent("look", [{ path: "README.md", content }])).toBe(`look\n\nFiles I am sharing:\n\nFile README.md:\n\`\`\`\`\`\n${content}\n\`\`\`\`\``);
  });

  it("keeps the newest earlier messages within the count and characters, oldest first, without gaps", () => {
    const many = Array.from({ length: 14 }, (_, i) => turn(i % 2 === 0 ? "user" : "assistant", `m${i}`));
    expect(boundHistory(many).map((t) => t.content)).toEqual(many.slice(-AI_CHAT_LIMITS.historyMessages).map((t) => t.content));
    const big = "x".repeat(AI_CHAT_LIMITS.historyChars - "newest".length - 2);
    expect(boundHistory([turn("user", "old"), turn("assistant", big), turn("user", "newest")]).map((t) => t.content)).toEqual([big, "newest"]);
    expect(boundHistory([turn("user", "x".repeat(AI_CHAT_LIMITS.historyChars + 1))])).toEqual([]);
  });
});

describe("token estimates", () => {
  it("count about four characters a token, deterministically", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcd")).toBe(1);
    expect(estimateTokens("abcde")).toBe(2);
    expect(estimatePromptTokens([{ role: "user", content: "abcd" }, { role: "system", content: "" }])).toBe(1 + 4 + 4);
  });
});

describe("the local stand-in's answer", () => {
  const prompt = buildPrompt({
    statement,
    language: null,
    history: [turn("user", "earlier"), turn("assistant", "answer")],
    message: "How do I cut at a word boundary?",
    files: [{ path: "src/slugify.js", content: "File x.js:\nnot a header\n" }],
  });

  it("says it is the local stand-in, quotes the question and names the shared files", () => {
    const text = localAnswer(prompt).join("");
    expect(text.startsWith(LOCAL_ANSWER_PREFIX)).toBe(true);
    expect(text).toMatch(/not from a language model/);
    expect(text).toContain('You asked: "How do I cut at a word boundary?"');
    expect(text).toContain("2 earlier messages");
    expect(text).toContain("the shared file src/slugify.js.");
  });

  it("comes in several chunks and depends only on the prompt", () => {
    const chunks = localAnswer(prompt);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(localAnswer(prompt)).toEqual(chunks);
    const other = localAnswer([...prompt.slice(0, -1), { role: "user", content: "Something else" }]).join("");
    expect(other).not.toBe(chunks.join(""));
    expect(other.match(/fingerprint (\w+)/)?.[1]).not.toBe(chunks.join("").match(/fingerprint (\w+)/)?.[1]);
  });
});

describe("Server-Sent Events", () => {
  it("frames one event with one line of JSON data, whatever the text holds", () => {
    expect(sseEvent("delta", { type: "delta", text: "a\nb\r\n\n" })).toBe('event: delta\ndata: {"type":"delta","text":"a\\nb\\r\\n\\n"}\n\n');
  });

  it("reads back what it frames", () => {
    const parser = new SseParser();
    const text = sseEvent("start", { n: 1 }) + sseEvent("delta", { text: "hé\n" });
    expect(parser.feed(text)).toEqual([
      { event: "start", data: '{"n":1}' },
      { event: "delta", data: '{"text":"hé\\n"}' },
    ]);
  });

  it("takes text cut anywhere, CRLF and CR line ends, comments, multi-line data and the default event name", () => {
    const stream = ": keep-alive\r\ndata: one\r\ndata: two\r\n\r\nevent: x\rdata:three\r\rid: 7\ndata: four\n\n";
    const expected = [
      { event: "message", data: "one\ntwo" },
      { event: "x", data: "three" },
      { event: "message", data: "four" },
    ];
    for (const size of [1, 2, 3, 5, stream.length]) {
      const parser = new SseParser();
      const got = [];
      for (let i = 0; i < stream.length; i += size) got.push(...parser.feed(stream.slice(i, i + size)));
      got.push(...parser.end());
      expect(got, `pieces of ${size}`).toEqual(expected);
    }
  });

  it("drops an event the stream ended before finishing, and events without data", () => {
    const parser = new SseParser();
    expect(parser.feed("event: ping\n\ndata: cut")).toEqual([]);
    expect(parser.end()).toEqual([]);
  });
});
