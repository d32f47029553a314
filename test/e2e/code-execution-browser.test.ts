import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { executionServerMessageSchema } from "../../protocol/socket-messages";
import { mustOpenLive } from "../../scripts/lib/live-socket";
import { api, devToken, freshIp } from "../support/node/http-client";
import { launchChromium } from "../support/node/browser";

// A real browser cannot put Authorization on a WebSocket: it opens the execution's socket with
// the browser ticket (docs/api.md, "WebSocket authentication") from a page of the API's origin.
interface Seen {
  messages: { type: string; data?: string; status?: string; code?: number }[];
  closeCode: number | null;
}

describe("live code execution from Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => browser?.close());

  it("opens the socket with the ticket, sends stdin and sees the program's answer", async () => {
    const token = await devToken({ sub: `e2e-browser-exec-${process.pid}`, role: "candidate" });
    const res = await api("/api/v1/code-execution/execute", {
      method: "POST",
      token,
      body: { language: "node", file: "greet.js", files: [{ path: "greet.js", content: "process.stdin.once('data', (d) => { console.log('hi ' + String(d).trim()); process.exit(0); });\n" }] },
    });
    expect(res.status).toBe(201);
    const { ws_url, ws_ticket } = (await res.json()) as { ws_url: string; ws_ticket: string };

    const page = await browser.newPage();
    await page.goto(`${inject("apiUrl")}/health`);
    const seen = await page.evaluate(
      ({ url }) =>
        new Promise<Seen>((resolve, reject) => {
          const result: Seen = { messages: [], closeCode: null };
          const ws = new WebSocket(url);
          const timer = setTimeout(() => reject(new Error(`timed out: ${JSON.stringify(result)}`)), 30_000);
          ws.onmessage = (e) => {
            const message = JSON.parse(String(e.data)) as Seen["messages"][number];
            result.messages.push(message);
            if (message.type === "hello") ws.send(JSON.stringify({ type: "stdin", data: "browser\n" }));
          };
          ws.onclose = (e) => {
            clearTimeout(timer);
            result.closeCode = e.code;
            resolve(result);
          };
        }),
      { url: `${ws_url}?ticket=${ws_ticket}` },
    );
    await page.close();
    const stdout = seen.messages.filter((m) => m.type === "stdout").map((m) => m.data).join("");
    expect(stdout).toBe("hi browser\n");
    expect(seen.messages.at(-1)).toMatchObject({ type: "exit", status: "exited", code: 0 });
    expect(seen.closeCode).toBe(1000);
  });

  it("cannot reuse the ticket: the browser's second upgrade is refused", async () => {
    const token = await devToken({ sub: `e2e-browser-exec2-${process.pid}`, role: "candidate" });
    const res = await api("/api/v1/code-execution/execute", {
      method: "POST",
      token,
      body: { language: "python", file: "wait.py", files: [{ path: "wait.py", content: "input()\n" }] },
    });
    const { ws_url, ws_ticket } = (await res.json()) as { ws_url: string; ws_ticket: string };
    const page = await browser.newPage();
    await page.goto(`${inject("apiUrl")}/health`);
    const outcomes = await page.evaluate(async ({ url }) => {
      const attempt = () =>
        new Promise<string>((resolve) => {
          const ws = new WebSocket(url);
          ws.onopen = () => resolve("open");
          ws.onerror = () => resolve("refused");
        });
      const first = await attempt();
      const second = await attempt();
      return [first, second];
    }, { url: `${ws_url}?ticket=${ws_ticket}` });
    await page.close();
    expect(outcomes).toEqual(["open", "refused"]);
    // The program waits for input and holds a sandbox: end it from a Bearer client.
    const socket = await mustOpenLive(ws_url, executionServerMessageSchema, { token, ip: freshIp() });
    socket.send({ type: "terminate" });
    expect(await socket.next("exit")).toMatchObject({ status: "killed", cause: "terminated" });
  });
});
