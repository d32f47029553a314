import { afterEach, describe, expect, it } from "vitest";
import { api, Latest, read, ViewCache, viewCache } from "../../../web/src/lib/data";
import { location } from "../../../web/src/lib/router";

/** A request whose answer the test gives when it likes, counting how often it was asked. */
function pending<T>() {
  let settle!: { resolve: (value: T) => void; reject: (error: unknown) => void };
  let asked = 0;
  const load = () => {
    asked += 1;
    return new Promise<T>((resolve, reject) => {
      settle = { resolve, reject };
    });
  };
  return { load, settle: () => settle, asked: () => asked };
}

describe("Latest (only the newest request's answer lands)", () => {
  it("an older request that answers after a newer one was asked is dropped", () => {
    const latest = new Latest();
    const first = latest.next();
    latest.cancel(); // the effect's clean-up when the filters change
    const second = latest.next();
    expect(first()).toBe(false);
    expect(second()).toBe(true);
  });

  it("a newer request alone makes an older one stale, with no clean-up between", () => {
    const latest = new Latest();
    const first = latest.next();
    const second = latest.next();
    expect([first(), second()]).toEqual([false, true]);
  });

  it("nothing lands once cancelled (the page has gone)", () => {
    const latest = new Latest();
    const pendingTicket = latest.next();
    latest.cancel();
    expect(pendingTicket()).toBe(false);
  });
});

describe("ViewCache (what the components of one view read is asked once)", () => {
  it("readers of one key in one view share one request and its answer", async () => {
    const cache = new ViewCache(() => "view-1");
    const me = pending<{ email: string }>();
    const header = cache.get("/me", me.load);
    const page = cache.get("/me", me.load);
    me.settle().resolve({ email: "ada@example.com" });
    expect(await header).toEqual({ email: "ada@example.com" });
    expect(await page).toBe(await header);
    expect(await cache.get("/me", me.load)).toEqual({ email: "ada@example.com" });
    expect(me.asked()).toBe(1);
  });

  it("other keys are other requests", async () => {
    const cache = new ViewCache(() => "view-1");
    const a = cache.get("/tasks/a", async () => "a");
    const b = cache.get("/tasks/b", async () => "b");
    expect([await a, await b]).toEqual(["a", "b"]);
  });

  it("a new view asks again, and an answer asked for in the old view never lands in the new one's cache", async () => {
    let view = "view-1";
    const cache = new ViewCache(() => view);
    const old = pending<string>();
    const asked = cache.get("/attempts/1", old.load);
    view = "view-2";
    const fresh = pending<string>();
    const again = cache.get("/attempts/1", fresh.load);
    expect(fresh.asked()).toBe(1);
    old.settle().resolve("before");
    fresh.settle().resolve("after");
    expect(await asked).toBe("before");
    expect(await again).toBe("after");
    expect(await cache.get("/attempts/1", async () => "not asked")).toBe("after");
  });

  it("a failed read is not kept: trying again asks again", async () => {
    const cache = new ViewCache(() => "view-1");
    await expect(cache.get("/me", () => Promise.reject(new Error("offline")))).rejects.toThrow("offline");
    expect(await cache.get("/me", async () => "back")).toBe("back");
  });

  it("clear() (a write, a reload) forgets every answer", async () => {
    const cache = new ViewCache(() => "view-1");
    await cache.get("/tasks", async () => ["old"]);
    cache.clear();
    expect(await cache.get("/tasks", async () => ["new"])).toEqual(["new"]);
  });
});

describe("the app's view cache", () => {
  const before = location.peek();
  afterEach(() => {
    location.value = before;
  });

  it("starts afresh at every navigation, even to the same address", async () => {
    await viewCache.get("test:/me", async () => "first view");
    expect(await viewCache.get("test:/me", async () => "asked again")).toBe("first view");
    location.value = { path: "/attempts/1", query: new URLSearchParams() };
    expect(await viewCache.get("test:/me", async () => "second view")).toBe("second view");
    location.value = { path: "/attempts/1", query: new URLSearchParams() };
    expect(await viewCache.get("test:/me", async () => "third view")).toBe("third view");
  });
});

describe("read (a GET kept for the view)", () => {
  const before = location.peek();
  afterEach(() => {
    location.value = before;
  });

  /** A stand-in for the network (the client's per-request `fetch`): answers JSON, records what was asked. */
  function network() {
    const asked: string[] = [];
    const fetch = async (request: Request) => {
      asked.push(`${request.method} ${new URL(request.url).pathname}`);
      return Response.json({ email: `answer-${asked.length}@example.com`, ws_url: "ws://x", ws_ticket: "t" }, { status: request.method === "GET" ? 200 : 201 });
    };
    return { asked, fetch };
  }

  it("asks once per view for what several components read; the next view asks again", async () => {
    location.value = { path: "/attempts", query: new URLSearchParams() };
    const net = network();
    const [header, page] = await Promise.all([read("/api/v1/me", { fetch: net.fetch }), read("/api/v1/me", { fetch: net.fetch })]);
    expect(page).toBe(header);
    expect(net.asked).toEqual(["GET /api/v1/me"]);
    location.value = { path: "/attempts/att_1", query: new URLSearchParams() };
    expect((await read("/api/v1/me", { fetch: net.fetch })).email).toBe("answer-2@example.com");
    expect(net.asked).toEqual(["GET /api/v1/me", "GET /api/v1/me"]);
  });

  it("a write empties the view's cache; a socket ticket does not", async () => {
    location.value = { path: "/attempts", query: new URLSearchParams() };
    const net = network();
    await read("/api/v1/me", { fetch: net.fetch });
    await api.POST("/api/v1/notifications/ws-ticket", { fetch: net.fetch });
    await read("/api/v1/me", { fetch: net.fetch });
    expect(net.asked).toEqual(["GET /api/v1/me", "POST /api/v1/notifications/ws-ticket"]);
    await api.POST("/api/v1/attempts", { body: { task_id: "tsk_1" }, fetch: net.fetch });
    await read("/api/v1/me", { fetch: net.fetch });
    expect(net.asked).toEqual(["GET /api/v1/me", "POST /api/v1/notifications/ws-ticket", "POST /api/v1/attempts", "GET /api/v1/me"]);
  });

  it("is typed as the client's GET: paths, their parameters and the answer", () => {
    // Compiled, never run: the type-check is the test.
    const typed = async () => {
      const me = await read("/api/v1/me");
      const email: string = me.email;
      const attempt = await read("/api/v1/attempts/{attempt_id}", { params: { path: { attempt_id: "att_1" } } });
      const taskId: string = attempt.task_id;
      // @ts-expect-error the path needs its attempt_id
      await read("/api/v1/attempts/{attempt_id}");
      // @ts-expect-error no GET at this path
      await read("/api/v1/attempts/{attempt_id}/start", { params: { path: { attempt_id: "att_1" } } });
      return [email, taskId];
    };
    expect(typeof typed).toBe("function");
  });
});
