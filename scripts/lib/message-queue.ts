// What a socket received, in order, taken one message at a time: the end-to-end tests, the
// workerd tests and the execution bench read their sockets through it.
import { Changes } from "./wait";

export type Message = Record<string, unknown> & { type: string };

export class MessageQueue {
  readonly messages: Message[] = [];
  private taken = 0;
  private readonly changes = new Changes();

  push(message: Message): void {
    this.messages.push(message);
    this.changes.notify();
  }

  /** Lets a waiting `next` look again (the socket closed: nothing more will come). */
  poke(): void {
    this.changes.notify();
  }

  /** The next message not yet taken (of `type` when given, skipping others); fails after `timeoutMs`. */
  next(type?: string, timeoutMs = 5000): Promise<Message> {
    return this.changes.until(
      () => {
        while (this.taken < this.messages.length) {
          const message = this.messages[this.taken++] as Message;
          if (!type || message.type === type) return message;
        }
        return undefined;
      },
      { timeoutMs, failure: () => `no ${type ?? "message"} within ${timeoutMs} ms; got ${JSON.stringify(this.messages).slice(-2000)}` },
    );
  }
}

/** Reads a socket's JSON messages into a queue (text or binary frames), and how it closed. */
export function socketInbox(ws: WebSocket): { queue: MessageQueue; closed: Promise<{ code: number; reason: string }> } {
  const queue = new MessageQueue();
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.addEventListener("close", (e) => {
      resolve({ code: e.code, reason: e.reason });
      queue.poke();
    });
  });
  ws.addEventListener("message", (e) => {
    const text = typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer);
    queue.push(JSON.parse(text) as Message);
  });
  return { queue, closed };
}
