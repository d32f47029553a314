import { describe, expect, it } from "vitest";
import { readSse, SseParser, type SseEvent } from "../../../web/src/candidate/sse";

function parseAll(chunks: string[]): SseEvent[] {
  const parser = new SseParser();
  return chunks.flatMap((c) => parser.push(c));
}

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
}

describe("SseParser (the AI chat's Server-Sent Events)", () => {
  it("reads the service's events: name, one line of JSON, a blank line", () => {
    const text =
      'event: start\ndata: {"type":"start","answer_id":"chat_2"}\n\n' +
      'event: delta\ndata: {"type":"delta","text":"Hello"}\n\n' +
      'event: done\ndata: {"type":"done"}\n\n';
    expect(parseAll([text])).toEqual([
      { event: "start", data: '{"type":"start","answer_id":"chat_2"}' },
      { event: "delta", data: '{"type":"delta","text":"Hello"}' },
      { event: "done", data: '{"type":"done"}' },
    ]);
  });

  it("puts together events split anywhere across chunks, CRLF split between chunks too", () => {
    const text = 'event: delta\r\ndata: {"text":"a"}\r\n\r\nevent: delta\r\ndata: {"text":"b"}\r\n\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      expect(parseAll([text.slice(0, cut), text.slice(cut)])).toEqual([
        { event: "delta", data: '{"text":"a"}' },
        { event: "delta", data: '{"text":"b"}' },
      ]);
    }
  });

  it("joins data lines with LF, accepts CR line ends, skips comments and unknown fields, keeps the id", () => {
    expect(parseAll([": keep-alive\rdata: one\rdata:two\rretry: 10\rfoo: bar\rid: 7\r\r"])).toEqual([{ event: "message", data: "one\ntwo", id: "7" }]);
  });

  it("dispatches nothing for an event without data, strips one leading space only, ignores a BOM", () => {
    expect(parseAll(["\uFEFFevent: ping\n\ndata:  two spaces\ndata\n\n"])).toEqual([{ event: "message", data: " two spaces\n" }]);
  });

  it("discards an event the stream cut off before its blank line", async () => {
    const encoder = new TextEncoder();
    const events: SseEvent[] = [];
    for await (const e of readSse(streamOf([encoder.encode("data: whole\n\n"), encoder.encode("data: cut")]))) events.push(e);
    expect(events).toEqual([{ event: "message", data: "whole" }]);
  });

  it("decodes UTF-8 split between chunks", async () => {
    const bytes = new TextEncoder().encode('data: {"text":"héllo ✓"}\n\n');
    const events: SseEvent[] = [];
    for await (const e of readSse(streamOf([bytes.slice(0, 14), bytes.slice(14, 23), bytes.slice(23)]))) events.push(e);
    expect(events).toEqual([{ event: "message", data: '{"text":"héllo ✓"}' }]);
  });
});
