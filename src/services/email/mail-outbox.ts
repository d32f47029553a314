import { outboxFileName, type OutboxRecord } from "../../domain/outbox";
import type { Env } from "../../env";
import { artifactStorage } from "../storage/artifact-storage";
import type { Mailer } from "./mail-types";
import { postJson } from "./post-json";

/**
 * Development and tests: the Worker cannot write files, so each message is kept in R2 under
 * `outbox/` and, when DEV_MAIL_SINK_URL is set (`npm start` sets it), POSTed to the dev mail
 * sink, which writes the file. Names are stable per message, so a redelivery overwrites.
 */
export function outboxMailer(env: Env): Mailer {
  return {
    async send(message) {
      const record: OutboxRecord = {
        id: message.id,
        created_at: message.createdAt,
        from: message.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        links: message.links,
      };
      const key = `outbox/${outboxFileName(record)}`;
      await artifactStorage(env).put(key, JSON.stringify(record, null, 2), { contentType: "application/json" });
      if (!env.DEV_MAIL_SINK_URL) return { verdict: "sent", detail: `stored as ${key}` };
      return postJson(new URL("/_dev/outbox", env.DEV_MAIL_SINK_URL).toString(), record);
    },
  };
}
