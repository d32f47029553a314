import { afterEach, describe, expect, it, vi } from "vitest";
import { LOCAL_ANSWER_PREFIX, LOCAL_MODEL, type PromptMessage } from "../../src/domain/ai-chat";
import { localProvider } from "../../src/services/ai/local";
import { openAiPieces, openAiProvider } from "../../src/services/ai/openai";
import { AiProviderError, type ChatProvider, type ReplyPiece } from "../../src/services/ai/ai-types";
import { workersAiPieces, workersAiProvider, type WorkersAiBinding } from "../../src/services/ai/workers-ai";

const prompt: PromptMessage[] = [
  { role: "system", content: "Help without solving." },
  { role: "user", content: "Why does it fail?" },
];

/** A byte stream of `text` cut every `size` bytes, which splits lines, CRLFs and UTF-8 sequences alike. */
function bytes(text: string, size = 7): ReadableStream<Uint8Array> {
  const all = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= all.length) return controller.close();
      controller.enqueue(all.slice(at, at + size));
      at += size;
    },
  });
}

/** A stream that sends `text` and then breaks, as a dropped connection does. */
function breaking(text: string): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream({
    pull(controller) {
      if (sent) return controller.error(new Error("connection reset"));
      controller.enqueue(new TextEncoder().encode(text));
      sent = true;
    },
  });
}

const data = (value: unknown) => `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
const chunk = (content: string) => ({ choices: [{ index: 0, delta: { content } }] });

async function collect(provider: ChatProvider, signal = new AbortController().signal): Promise<ReplyPiece[]> {
  const pieces: ReplyPiece[] = [];
  for await (const piece of provider.reply(prompt, { maxTokens: 64, signal })) pieces.push(piece);
  return pieces;
}

async function failure(provider: ChatProvider, signal?: AbortSignal): Promise<{ error: unknown; pieces: ReplyPiece[] }> {
  const pieces: ReplyPiece[] = [];
  try {
    for await (const piece of provider.reply(prompt, { maxTokens: 64, signal: signal ?? new AbortController().signal })) pieces.push(piece);
  } catch (error) {
    return { error, pieces };
  }
  throw new Error("expected the reply to fail");
}

describe("the OpenAI-compatible stream's data", () => {
  it("gives the first choice's text, the usage, and done for [DONE]", () => {
    expect(openAiPieces(JSON.stringify(chunk("Hel")))).toEqual([{ text: "Hel" }]);
    expect(openAiPieces(JSON.stringify({ choices: [{ delta: { role: "assistant", content: "" } }] }))).toEqual([]);
    expect(openAiPieces(JSON.stringify({ choices: [{ delta: {}, finish_reason: "stop" }] }))).toEqual([]);
    expect(openAiPieces(JSON.stringify({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } }))).toEqual([
      { usage: { prompt_tokens: 12, completion_tokens: 3 } },
    ]);
    expect(openAiPieces("[DONE]")).toBe("done");
  });

  it("turns an error event or data that is not JSON into an AiProviderError", () => {
    expect(() => openAiPieces(JSON.stringify({ error: { message: "model overloaded" } }))).toThrow(/reported an error: model overloaded/);
    expect(() => openAiPieces("{not json")).toThrow(AiProviderError);
    expect(() => openAiPieces("42")).toThrow(/not an object/);
  });
});

describe("the OpenAI-compatible provider", () => {
  afterEach(() => vi.restoreAllMocks());
  const provider = openAiProvider({ baseUrl: "https://llm.example/v1/", apiKey: "sk-test", model: "gpt-test" });

  function answer(response: () => Response) {
    const requests: Request[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      requests.push(new Request(input, init));
      return response();
    });
    return requests;
  }

  it("posts a streamed chat completion and yields the text as it comes, then the usage", async () => {
    const stream = data(chunk("Réfléchis ")) + data(chunk("d'abord 🙂")) + data({ choices: [], usage: { prompt_tokens: 20, completion_tokens: 4 } }) + data("[DONE]");
    const requests = answer(() => new Response(bytes(stream.replaceAll("\n", "\r\n")), { headers: { "content-type": "text/event-stream" } }));
    const pieces = await collect(provider);
    expect(pieces).toEqual([{ text: "Réfléchis " }, { text: "d'abord 🙂" }, { usage: { prompt_tokens: 20, completion_tokens: 4 } }]);
    const [request] = requests as [Request];
    expect(request.url).toBe("https://llm.example/v1/chat/completions");
    expect(request.method).toBe("POST");
    expect(request.headers.get("authorization")).toBe("Bearer sk-test");
    expect(await request.json()).toEqual({
      model: "gpt-test",
      messages: prompt,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 64,
    });
  });

  it("sends no Authorization without a key", async () => {
    const requests = answer(() => new Response(bytes(data("[DONE]"))));
    await collect(openAiProvider({ baseUrl: "http://127.0.0.1:11434/v1", model: "llama" }));
    expect(requests[0]?.headers.has("authorization")).toBe(false);
  });

  it("refuses with the status only: the provider's words may name the account", async () => {
    answer(() => Response.json({ error: { message: "Incorrect API key provided: sk-te****" } }, { status: 401 }));
    const { error } = await failure(provider);
    expect(error).toBeInstanceOf(AiProviderError);
    expect((error as Error).message).toBe("the AI provider answered HTTP 401");
  });

  it("fails when the provider cannot be reached", async () => {
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("fetch failed"));
    expect((await failure(provider)).error).toMatchObject({ message: "the AI provider could not be reached: fetch failed" });
  });

  it("fails mid-stream, after the text that came, when the stream breaks, ends early or carries an error", async () => {
    answer(() => new Response(breaking(data(chunk("partial")))));
    let result = await failure(provider);
    expect(result.pieces).toEqual([{ text: "partial" }]);
    expect((result.error as Error).message).toMatch(/stream broke: connection reset/);

    answer(() => new Response(bytes(data(chunk("partial")))));
    result = await failure(provider);
    expect(result.pieces).toEqual([{ text: "partial" }]);
    expect((result.error as Error).message).toMatch(/ended before the answer was complete/);

    answer(() => new Response(bytes(data(chunk("a")) + data({ error: { message: "server overloaded" } }))));
    result = await failure(provider);
    expect(result.pieces).toEqual([{ text: "a" }]);
    expect((result.error as Error).message).toMatch(/server overloaded/);
  });

  it("stops reading when aborted", async () => {
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(data(chunk("one"))));
      },
      cancel() {
        cancelled = true;
      },
    });
    answer(() => new Response(endless));
    const controller = new AbortController();
    const pieces: ReplyPiece[] = [];
    const reading = (async () => {
      for await (const piece of provider.reply(prompt, { maxTokens: 64, signal: controller.signal })) {
        pieces.push(piece);
        controller.abort();
      }
    })();
    await expect(reading).rejects.toThrow(AiProviderError);
    expect(pieces).toEqual([{ text: "one" }]);
    expect(cancelled).toBe(true);
  });
});

describe("the Workers AI provider", () => {
  /** A stand-in for `env.AI`: records each run and answers with `output`. */
  function binding(output: () => unknown): WorkersAiBinding & { calls: [string, Record<string, unknown>][] } {
    const calls: [string, Record<string, unknown>][] = [];
    return {
      calls,
      async run(model, inputs) {
        calls.push([model, inputs]);
        return output();
      },
    };
  }

  it("reads Workers AI's own stream format: response deltas and a last usage", () => {
    expect(workersAiPieces(JSON.stringify({ response: "Hi", p: "abc" }))).toEqual([{ text: "Hi" }]);
    expect(workersAiPieces(JSON.stringify({ response: "", usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }))).toEqual([
      { usage: { prompt_tokens: 9, completion_tokens: 2 } },
    ]);
    expect(workersAiPieces(JSON.stringify(chunk("compat")))).toEqual([{ text: "compat" }]);
    expect(workersAiPieces("[DONE]")).toBe("done");
    expect(() => workersAiPieces("nope")).toThrow(AiProviderError);
  });

  it("runs the model named in config with the prompt, streaming, and yields the answer", async () => {
    const ai = binding(() => bytes(data({ response: "Look at " }) + data({ response: "line 3." }) + data({ response: "", usage: { prompt_tokens: 30, completion_tokens: 5 } }) + data("[DONE]"), 5));
    const provider = workersAiProvider(ai, "@cf/qwen/qwen2.5-coder-32b-instruct");
    expect([provider.name, provider.model]).toEqual(["workers-ai", "@cf/qwen/qwen2.5-coder-32b-instruct"]);
    expect(await collect(provider)).toEqual([{ text: "Look at " }, { text: "line 3." }, { usage: { prompt_tokens: 30, completion_tokens: 5 } }]);
    expect(ai.calls).toEqual([["@cf/qwen/qwen2.5-coder-32b-instruct", { messages: prompt, stream: true, max_tokens: 64 }]]);
  });

  it("fails when the binding refuses, does not stream, or its stream breaks", async () => {
    const refusing = binding(() => {
      throw new Error("3040: Capacity temporarily exceeded");
    });
    expect((await failure(workersAiProvider(refusing, "m"))).error).toMatchObject({ message: "Workers AI refused the request: 3040: Capacity temporarily exceeded" });
    expect((await failure(workersAiProvider(binding(() => ({ response: "whole" })), "m"))).error).toMatchObject({ message: "Workers AI did not stream its answer" });
    const broken = await failure(workersAiProvider(binding(() => breaking(data({ response: "half" }))), "m"));
    expect(broken.pieces).toEqual([{ text: "half" }]);
    expect(broken.error).toBeInstanceOf(AiProviderError);
  });
});

describe("the local provider", () => {
  it("streams the labelled, deterministic stand-in answer in several chunks", async () => {
    const provider = localProvider();
    expect([provider.name, provider.model]).toEqual(["local", LOCAL_MODEL]);
    const pieces = (await collect(provider)) as { text: string }[];
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    const text = pieces.map((p) => p.text).join("");
    expect(text.startsWith(LOCAL_ANSWER_PREFIX)).toBe(true);
    expect(((await collect(provider)) as { text: string }[]).map((p) => p.text).join("")).toBe(text);
  });
});
