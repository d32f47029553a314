/**
 * Runs the dev mail sink: `tsx scripts/dev-mail/main.ts`. DEV_MAIL_PORT (8791), DEV_MAIL_HOST
 * (127.0.0.1) and DEV_MAIL_OUTBOX (.dev/outbox) override the defaults.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { startDevMailSink } from "./server.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const settings = z
  .object({
    DEV_MAIL_PORT: z.coerce.number().int().min(0).max(65535).default(8791),
    DEV_MAIL_HOST: z.string().min(1).default("127.0.0.1"),
    DEV_MAIL_OUTBOX: z.string().min(1).default(path.join(repoRoot, ".dev", "outbox")),
  })
  .parse(process.env);

const sink = await startDevMailSink({ host: settings.DEV_MAIL_HOST, port: settings.DEV_MAIL_PORT, outboxDir: settings.DEV_MAIL_OUTBOX });
console.log(`dev-mail: writing e-mails to ${path.resolve(settings.DEV_MAIL_OUTBOX)} (POST ${sink.url}/_dev/outbox)`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void sink.close().then(() => process.exit(0));
  });
}
