// The baseline of `npm run bench -- api`: the least a Worker can do under the same wrangler dev.
// At `/?log` it also writes a log line like the one the API writes for a write or a failure
// (src/app.ts), and at `/?limit` it asks a rate limiter as the API does for every scope of every
// request (src/http/rate-limit.ts), so the bench can tell what wrangler dev charges for each from
// the API's own work.
interface HelloEnv {
  RL: { limit(options: { key: string }): Promise<{ success: boolean }> };
}

export default {
  async fetch(request: Request, env: HelloEnv, exec: { waitUntil(promise: Promise<unknown>): void }): Promise<Response> {
    const query = new URL(request.url).search;
    if (query === "?log") {
      const line = { request_id: crypto.randomUUID(), method: request.method, route: "/", status: 200, duration_ms: 0, user_id: null };
      exec.waitUntil(Promise.resolve().then(() => console.log(JSON.stringify({ level: "info", msg: "request", ...line }))));
    }
    if (query === "?limit") {
      const { success } = await env.RL.limit({ key: `burst:${request.headers.get("cf-connecting-ip") ?? "unknown"}` });
      if (!success) return new Response("limited", { status: 429 });
    }
    return new Response("ok");
  },
};
