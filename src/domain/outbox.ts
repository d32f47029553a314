/**
 * The development outbox: each e-mail the Worker sends with EMAIL_PROVIDER=outbox, as one
 * JSON file in `.dev/outbox/` written by the dev mail sink (scripts/dev-mail/) and as an
 * object under `outbox/` in R2. Shared by the Worker's adapter and the sink.
 */
import { z } from "zod";

export const OutboxRecordSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, "letters, digits, '.', '_' and '-' only"),
  created_at: z.iso.datetime(),
  from: z.string().max(400),
  to: z.string().max(320),
  subject: z.string().max(1000),
  text: z.string().max(200_000),
  html: z.string().max(400_000),
  links: z.array(z.string().max(4096)).max(20),
});
export type OutboxRecord = z.infer<typeof OutboxRecordSchema>;

/** `2026-11-21T08-50-12-345Z-<id>.json`: sorts by time; a valid file name and object key segment. */
export function outboxFileName(record: Pick<OutboxRecord, "id" | "created_at">): string {
  return `${record.created_at.replace(/[:.]/g, "-")}-${record.id}.json`;
}
