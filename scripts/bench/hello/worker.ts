// The baseline of `npm run bench -- api`: the least a Worker can do under the same wrangler dev.
// At `/?log` it also writes a log line like the one the API writes for every request (src/app.ts),
// so the bench can tell what wrangler dev charges for a console line from the API's own work.
export default {
  fetch(request: Request, _env: unknown, exec: { waitUntil(promise: Promise<unknown>): void }): Response {
    if (request.url.endsWith("/?log")) {
      const line = { request_id: crypto.randomUUID(), method: request.method, route: "/", status: 200, duration_ms: 0, user_id: null };
      exec.waitUntil(Promise.resolve().then(() => console.log(JSON.stringify({ level: "info", msg: "request", ...line }))));
    }
    return new Response("ok");
  },
};
