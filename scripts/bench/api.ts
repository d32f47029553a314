// API throughput and latency: GET /health and an authenticated GET /api/v1/me against the
// local server (BENCH_API_URL, else a stack of its own started with `npm start`), driven by
// autocannon, beside a hello-world Worker under the same wrangler dev (the baseline: what the
// runtime costs on this machine). Each figure is also given as a ratio to the baseline's. Two
// more rows price what wrangler dev charges for the API's platform calls, which a deployed
// Worker does not pay at that price: `hello_logged`, the same Worker writing one log line per
// request (wrangler dev relays every console call through its inspector and its terminal), and
// `hello_limited`, the same Worker asking one rate limiter per request (miniflare simulates the
// binding with a subrequest to a SQLite-backed Durable Object; /health asks one such scope,
// /api/v1/me two: docs/limits.md). `floor_health` and `floor_me` make exactly the binding calls
// of /health and of /me (their limiter scopes; for /me also one prepared D1 read) and nothing
// else: the API's own cost is its ratio to its floor. The baseline has static assets configured
// as the API has (hello/server.ts), so each row pays the platform's asset router as the API does. Client IPs rotate so that the per-IP rate limiter is
// evaluated on every request without capping the load, as it would be for many clients.
import autocannon from "autocannon";
import { mintLocalToken } from "../lib/local-token";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../lib/paths";
import { launchStack } from "../lib/stack";
import { launchHelloWorker } from "./hello/server";
import { percentile, type Emit } from "./metrics";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARM_UP_S = 5;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

/** Requests sent so far, across every load: each takes the next client IP. */
let n = 0;

async function load(url: string, headers: Record<string, string>, duration: number) {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    headers,
    requests: [
      {
        setupRequest: (req) => {
          n += 1;
          req.headers = { ...req.headers, "cf-connecting-ip": `10.200.${(n >> 8) & 255}.${n & 255}` };
          return req;
        },
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx responses and ${result.errors} errors under load`);
  }
  return result;
}

/** The API's compatibility date, so the baseline runs on the same runtime behaviour. */
function compatibilityDate(): string {
  const match = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(readFileSync(join(ROOT, "wrangler.toml"), "utf8"));
  if (!match?.[1]) throw new Error("wrangler.toml has no compatibility_date");
  return match[1];
}

export default async function apiBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const hello = await launchHelloWorker(compatibilityDate());
  const stack = given ? undefined : await launchStack().catch(async (e: unknown) => {
    await hello.stop();
    throw e;
  });
  const base = given ?? stack!.apiUrl;
  try {
    const token = await mintLocalToken({ sub: "bench-user", email: "bench@example.test", role: "interviewer", org: "bench-org", ttl: "1h" });
    const targets: { name: string; url: string; headers: Record<string, string> }[] = [
      { name: "hello", url: hello.url, headers: {} },
      { name: "hello_logged", url: `${hello.url}/?log`, headers: {} },
      { name: "hello_limited", url: `${hello.url}/?limit`, headers: {} },
      { name: "floor_health", url: `${hello.url}/?floor-health`, headers: {} },
      { name: "floor_me", url: `${hello.url}/?floor-me`, headers: {} },
      { name: "health", url: `${base}/health`, headers: {} },
      { name: "me", url: `${base}/api/v1/me`, headers: { authorization: `Bearer ${token}` } },
    ];
    for (const t of targets) await load(t.url, t.headers, WARM_UP_S); // JIT, D1 pages, the first-request user upsert
    // Round after round of every target, so that a machine that slows down or speeds up while
    // the bench runs moves the baseline with the rest: each figure is the median of its rounds.
    const rounds = new Map<string, { p50: number; p99: number; rps: number; requests: number }[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of targets) {
        const r = await load(t.url, t.headers, DURATION_S);
        rounds.get(t.name)!.push({ p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, requests: r.requests.total });
      }
    }
    const median = (name: string, key: "p50" | "p99" | "rps" | "requests") => percentile(rounds.get(name)!.map((r) => r[key]), 50);
    for (const t of targets) {
      const detail = { connections: CONNECTIONS, duration_s: DURATION_S, rounds: ROUNDS, requests: median(t.name, "requests") };
      const over = (key: "p50" | "p99" | "rps", base: string) => Number((median(t.name, key) / Math.max(median(base, key), 0.001)).toFixed(2));
      // /health and /me against the Worker that makes the same binding calls and nothing else.
      const floor = t.name === "health" || t.name === "me" ? `floor_${t.name}` : null;
      const ratio = (key: "p50" | "p99" | "rps") => ({ ratio_to_hello: over(key, "hello"), ...(floor && { ratio_to_floor: over(key, floor) }) });
      emit({ metric: `api_${t.name}_rps`, value: median(t.name, "rps"), unit: "req/s", ...detail, ...ratio("rps") });
      emit({ metric: `api_${t.name}_latency_p50_ms`, value: median(t.name, "p50"), unit: "ms", ...detail, ...ratio("p50") });
      emit({ metric: `api_${t.name}_latency_p99_ms`, value: median(t.name, "p99"), unit: "ms", ...detail, ...ratio("p99") });
    }
  } finally {
    await Promise.all([stack?.stop(), hello.stop()]);
  }
}
