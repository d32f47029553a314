// What a socket received, in order, taken one message at a time: the end-to-end tests, the
// workerd tests and the execution bench read their sockets through it.
import { Changes } from "./wait";

/** A message of a socket no schema is given for: any JSON object with a `type`. */
export type Message = Record<string, unknown> & { type: string };

/** The messages of `M` whose type is `K`; messages typed by no schema (`type: string`) stay as they are. */
export type OfType<M extends { type: string }, K extends string> = string extends M["type"] ? M : Extract<M, { type: K }>;

export class MessageQueue<M extends { type: string } = Message> {
  readonly messages: M[] = [];
  private taken = 0;
  private refusal: Error | undefined;
  private readonly changes = new Changes();

  push(message: M): void {
    this.messages.push(message);
    this.changes.notify();
  }

  /**
   * A frame that is not a message of the socket's schema: the server broke the contract, so
   * every `next` from now on fails with it rather than skipping it or waiting out its timeout.
   */
  refuse(error: Error): void {
    this.refusal ??= error;
    this.changes.notify();
  }

  /** Lets a waiting `next` look again (the socket closed: nothing more will come). */
  poke(): void {
    this.changes.notify();
  }

  /** The next message not yet taken (of `type` when given, skipping others); fails after `timeoutMs`, or at a refused frame. */
  next<K extends M["type"]>(type?: K, timeoutMs = 5000): Promise<OfType<M, K>> {
    return this.changes.until(
      () => {
        if (this.refusal) throw this.refusal;
        while (this.taken < this.messages.length) {
          const message = this.messages[this.taken++]!;
          if (!type || message.type === type) return message as OfType<M, K>;
        }
        return undefined;
      },
      { timeoutMs, failure: () => `no ${type ?? "message"} within ${timeoutMs} ms; got ${JSON.stringify(this.messages).slice(-2000)}` },
    );
  }
}

/** Any JSON object with a string `type`: what a socket of no schema is taken to send. */
function anyMessage(json: unknown): Message {
  if (typeof json !== "object" || json === null || typeof (json as { type?: unknown }).type !== "string") throw new Error("not an object with a string type");
  return json as Message;
}

interface Inbox<M extends { type: string }> {
  queue: MessageQueue<M>;
  closed: Promise<{ code: number; reason: string }>;
}

/**
 * Reads a socket's JSON messages into a queue (text or binary frames), each through `parse`
 * (which throws on a frame that is not such a message: the queue refuses it), and how it closed.
 */
export function socketInbox(ws: WebSocket): Inbox<Message>;
export function socketInbox<M extends { type: string }>(ws: WebSocket, parse: (json: unknown) => M): Inbox<M>;
export function socketInbox(ws: WebSocket, parse: (json: unknown) => { type: string } = anyMessage): Inbox<{ type: string }> {
  const queue = new MessageQueue<{ type: string }>();
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.addEventListener("close", (e) => {
      resolve({ code: e.code, reason: e.reason });
      queue.poke();
    });
  });
  ws.addEventListener("message", (e) => {
    const text = typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer);
    try {
      queue.push(parse(JSON.parse(text)));
    } catch (error) {
      queue.refuse(new Error(`a frame that is no message of the socket (${error instanceof Error ? error.message : String(error)}): ${text.slice(0, 500)}`));
    }
  });
  return { queue, closed };
}
