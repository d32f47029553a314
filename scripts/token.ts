// `npm run --silent token -- --sub ID --email E --role R [--org ORG] [--ttl 1h]`: prints a
// session JWT, and nothing else on stdout, that the local server accepts.
import { parseArgs } from "node:util";
import { z } from "zod";
import { mintLocalToken } from "./lib/local-token";

const Args = z.object({
  sub: z.string().min(1),
  email: z.email(),
  role: z.enum(["candidate", "interviewer", "orgadmin", "admin"]),
  org: z.string().min(1).optional(),
  ttl: z
    .string()
    .regex(/^\d+\s*(s|sec|secs|m|min|mins|h|hr|hrs|d|day|days)?$/, "like 1h, 30m, 2d or seconds")
    .default("1h"),
});

const { values } = parseArgs({
  options: {
    sub: { type: "string" },
    email: { type: "string" },
    role: { type: "string" },
    org: { type: "string" },
    ttl: { type: "string" },
  },
});
const parsed = Args.safeParse(values);
if (!parsed.success) {
  for (const issue of parsed.error.issues) console.error(`--${issue.path.join(".")}: ${issue.message}`);
  console.error("usage: npm run --silent token -- --sub ID --email E --role R [--org ORG] [--ttl 1h]");
  process.exit(2);
}
const { ttl, ...claims } = parsed.data;
try {
  const token = await mintLocalToken({ ...claims, ttl: /^\d+$/.test(ttl) ? `${ttl}s` : ttl });
  process.stdout.write(`${token}\n`);
} catch (e) {
  console.error((e as Error).message);
  process.exit(1);
}
