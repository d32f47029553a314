import { log } from "../lib/log";

/** What a queue's consumer does with one message, and how it is retried when that throws. */
export interface MessageHandler<T> {
  /** The subject of the queue's log lines, e.g. "runner job". */
  subject: string;
  /** Log fields that identify a message; never tokens or other secrets it carries. */
  fields(body: T): Record<string, unknown>;
  /** Handles one message: acks it, or retries it with a delay of its own choosing. */
  handle(message: Message<T>): Promise<void>;
  /** Seconds before the next delivery of a message whose handling threw (see domain/backoff.ts). */
  retryDelaySeconds(attempts: number): number;
}

/**
 * Handles every message of a batch concurrently. Delivery is at least once, so handlers
 * check stored state before acting. A handler that throws gets its message retried with its
 * backoff; once the queue's `max_retries` are spent the message goes to the dead-letter queue.
 * One failing message never holds back or re-delivers the others.
 */
export async function consumeEach<T>(batch: MessageBatch<T>, handler: MessageHandler<T>): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        await handler.handle(message);
      } catch (e) {
        const delaySeconds = handler.retryDelaySeconds(message.attempts);
        log("error", `${handler.subject}: message failed, retrying`, {
          ...handler.fields(message.body),
          attempt: message.attempts,
          delay_s: delaySeconds,
          error: e instanceof Error ? e.message : String(e),
        });
        message.retry({ delaySeconds });
      }
    }),
  );
}
