// The baseline of `npm run bench -- api`: the least a Worker can do under the same wrangler dev.
// At `/?log` it also writes a log line like the one the API writes for a write or a failure
// (src/app.ts), and at `/?limit` it asks a rate limiter as the API does for every scope of every
// request (src/http/rate-limit.ts), so the bench can tell what wrangler dev charges for each from
// the API's own work. The floors make exactly the binding calls an API route makes and nothing
// else: `/?floor-health` the one limiter scope of /health, `/?floor-me` the two of /api/v1/me
// (asked at once) and one prepared D1 read, the user row /me reads.
interface Limiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}
/** The part of D1's binding the floor uses (this file is type-checked without the Workers types). */
interface D1Statement {
  bind(...values: unknown[]): D1Statement;
  first(): Promise<unknown>;
  run(): Promise<unknown>;
}
interface HelloEnv {
  RL: Limiter;
  RL_GENERAL: Limiter;
  DB: { prepare(sql: string): D1Statement };
}

let usersTable: Promise<unknown> | null = null;

export default {
  async fetch(request: Request, env: HelloEnv, exec: { waitUntil(promise: Promise<unknown>): void }): Promise<Response> {
    const query = new URL(request.url).search;
    const ip = request.headers.get("cf-connecting-ip") ?? "unknown";
    if (query === "?log") {
      const line = { request_id: crypto.randomUUID(), method: request.method, route: "/", status: 200, duration_ms: 0, user_id: null };
      exec.waitUntil(Promise.resolve().then(() => console.log(JSON.stringify({ level: "info", msg: "request", ...line }))));
    }
    if (query === "?limit" || query === "?floor-health") {
      const { success } = await env.RL.limit({ key: `burst:${ip}` });
      if (!success) return new Response("limited", { status: 429 });
    }
    if (query === "?floor-me") {
      const asked = await Promise.all([env.RL.limit({ key: `burst:${ip}` }), env.RL_GENERAL.limit({ key: `general:${ip}` })]);
      if (asked.some((a) => !a.success)) return new Response("limited", { status: 429 });
      usersTable ??= env.DB.prepare("CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, email TEXT)").run();
      await usersTable;
      const user = await env.DB.prepare("SELECT id, email FROM users WHERE id = ?").bind("bench-user").first();
      return Response.json({ user });
    }
    return new Response("ok");
  },
};
