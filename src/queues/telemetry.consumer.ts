import { database } from "../db/client";
import { insertTelemetry } from "../db/telemetry.queries";
import { backoffSeconds } from "../domain/backoff";
import type { Env } from "../env";
import { log } from "../lib/log";
import { consumeEach } from "./consume";
import type { TelemetryMessage } from "../domain/queue-messages";

export const TELEMETRY_QUEUE = "telemetry";
export const TELEMETRY_DEAD_LETTERS = "telemetry-dlq";

const common = {
  subject: "telemetry",
  fields: (body: TelemetryMessage) => ({ attempt_id: body.attempt_id, events: body.events.length }),
  retryDelaySeconds: (attempts: number) => backoffSeconds(attempts, 5, 300),
};

/**
 * Consumer of `telemetry`: stores each message's events in D1. Delivery is at least once and
 * clients re-send, so the insert keeps the first copy of each (attempt, event id) and a
 * repeat changes nothing. A failing insert is retried with backoff, then dead-lettered.
 */
export function consumeTelemetry(batch: MessageBatch<TelemetryMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    async handle(message) {
      const { attempt_id, organization_id, events } = message.body;
      const stored = await insertTelemetry(database(env.DB), attempt_id, organization_id, events);
      if (stored < events.length) log("info", "telemetry: repeated events ignored", { attempt_id, repeated: events.length - stored });
      message.ack();
    },
  });
}

/**
 * Consumer of `telemetry-dlq`: events whose storing kept failing (D1 unavailable for longer
 * than the main queue's retries). It tries once more per delivery, later and slower, with the
 * same idempotent insert; only when these retries are spent too are the events lost, and the
 * log names them.
 */
export function consumeTelemetryDeadLetters(batch: MessageBatch<TelemetryMessage>, env: Env): Promise<void> {
  return consumeEach(batch, {
    ...common,
    retryDelaySeconds: () => 60,
    async handle(message) {
      const { attempt_id, organization_id, events } = message.body;
      log("warn", "telemetry: dead letter, storing late", { attempt_id, attempts: message.attempts, event_ids: events.map((e) => e.event_id) });
      await insertTelemetry(database(env.DB), attempt_id, organization_id, events);
      message.ack();
    },
  });
}
