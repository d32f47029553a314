// Server-Sent Events read from a fetch body (the AI chat's answer, docs/api.md "AI chat"), by
// the HTML standard's parsing rules: lines end in CRLF, LF or CR (also split across chunks),
// `data` lines join with LF, comments and unknown fields are skipped, a blank line dispatches,
// and an event cut off by the end of the stream is discarded.

export interface SseEvent {
  /** The `event` field; "message" when none was given. */
  event: string;
  data: string;
  id?: string;
}

export class SseParser {
  private pending = "";
  private skipLf = false;
  private first = true;
  private data: string[] = [];
  private event = "";
  private id: string | undefined;

  /** The events that `chunk` completes. */
  push(chunk: string): SseEvent[] {
    let text = chunk;
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLf && text.startsWith("\n")) text = text.slice(1);
    this.skipLf = false;
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(this.pending + text.slice(start, i), out);
      this.pending = "";
      if (c === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i += 1;
        } else this.skipLf = true;
      }
      start = i + 1;
    }
    this.pending += text.slice(start);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === "") {
      if (this.data.length > 0) out.push({ event: this.event || "message", data: this.data.join("\n"), ...(this.id !== undefined ? { id: this.id } : {}) });
      this.data = [];
      this.event = "";
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.id = value;
  }
}

/** The events of a byte stream, as they arrive. */
export async function* readSse(stream: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    yield* parser.push(decoder.decode());
  } finally {
    reader.releaseLock();
  }
}
