// `npm run --silent token -- --sub ID --email E --role R [--org ORG] [--ttl 1h]`: prints a
// session JWT, and nothing else on stdout, that the local server accepts.
import { parseArgs } from "node:util";
import { z } from "zod";
import { mintDevToken } from "./lib/dev-identity";
import { readDevVars } from "./lib/dev-vars";
import { DEV_VARS } from "./lib/paths";

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
const vars = readDevVars(DEV_VARS);
if (!vars.DEV_IDP_PRIVATE_JWK) {
  console.error("no dev identity in .dev.vars; run npm start or npm run setup first");
  process.exit(1);
}
const { ttl, ...claims } = parsed.data;
const token = await mintDevToken(vars.DEV_IDP_PRIVATE_JWK, {
  ...claims,
  ttl: /^\d+$/.test(ttl) ? `${ttl}s` : ttl,
  issuer: vars.AUTH_ISSUER,
  audience: vars.AUTH_AUDIENCE,
});
process.stdout.write(`${token}\n`);
