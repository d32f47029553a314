import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevMailSink, type DevMailSink } from "../../scripts/dev-mail/server";

describe("the dev mail sink", () => {
  const dir = join(mkdtempSync(join(tmpdir(), "dev-mail-")), "outbox");
  let sink: DevMailSink;
  beforeAll(async () => {
    sink = await startDevMailSink({ port: 0, outboxDir: dir });
  });
  afterAll(async () => {
    await sink.close();
    rmSync(join(dir, ".."), { recursive: true, force: true });
  });

  const record = {
    id: "inv_abc.v1",
    created_at: "2026-11-21T08:50:12.345Z",
    from: "Assay <invites@assay.dev>",
    to: "cand@example.test",
    subject: "Acme invites you",
    text: "Hello",
    html: "<p>Hello</p>",
    links: ["http://127.0.0.1:8787/invites/accept?token=abc"],
  };
  const post = (body: unknown) =>
    fetch(`${sink.url}/_dev/outbox`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  it("answers its health check with the directory it writes to", async () => {
    expect(await (await fetch(`${sink.url}/health`)).json()).toEqual({ status: "ok", outbox: dir });
  });

  it("writes each message as <timestamp>-<id>.json; the same message again overwrites its file", async () => {
    const res = await post(record);
    expect(res.status).toBe(201);
    const file = join(dir, "2026-11-21T08-50-12-345Z-inv_abc.v1.json");
    expect(await res.json()).toEqual({ file });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(record);
    expect((await post({ ...record, text: "Hello again" })).status).toBe(201);
    expect(readdirSync(dir)).toEqual(["2026-11-21T08-50-12-345Z-inv_abc.v1.json"]);
    expect(JSON.parse(readFileSync(file, "utf8")).text).toBe("Hello again");
  });

  it("refuses what is not a message, and ids that would leave its directory", async () => {
    expect((await post({ ...record, id: "../../etc/x" })).status).toBe(422);
    expect((await post({ to: "x" })).status).toBe(422);
    const notJson = await fetch(`${sink.url}/_dev/outbox`, { method: "POST", body: "{" });
    expect(notJson.status).toBe(400);
    expect((await fetch(`${sink.url}/_dev/outbox`)).status).toBe(405);
    expect((await fetch(`${sink.url}/elsewhere`)).status).toBe(404);
  });
});
