import { describe, expect, it } from "vitest";
import { cpuMsFromStat } from "../../scripts/lib/process-cpu";
import { latencyPercentiles, lostSaves, requestDurations, requestMix, secondsToLast, type AcknowledgedSave, type FrozenEntry } from "../../scripts/lib/load-figures";

const upsert = (path: string, sha256: string): FrozenEntry => ({ path, op: "upsert", sha256 });

describe("lostSaves", () => {
  it("finds nothing lost when the submission holds every save's last write", () => {
    const saves: AcknowledgedSave[] = [
      { "src/a.js": "a1", "notes/1.md": "n1" },
      { "src/a.js": "a2", "notes/2.md": "n2" },
    ];
    expect(lostSaves(saves, [upsert("src/a.js", "a2"), upsert("notes/1.md", "n1"), upsert("notes/2.md", "n2")])).toBe(0);
  });

  it("owes a save nothing for a path a later save wrote again", () => {
    expect(lostSaves([{ "src/a.js": "a1" }, { "src/a.js": "a2" }], [upsert("src/a.js", "a2")])).toBe(0);
  });

  it("counts a save whose own file is missing, or holds an older content, once", () => {
    const saves: AcknowledgedSave[] = [
      { "src/a.js": "a1", "notes/1.md": "n1" },
      { "src/a.js": "a2", "notes/2.md": "n2" },
    ];
    expect(lostSaves(saves, [upsert("src/a.js", "a2"), upsert("notes/1.md", "n1")])).toBe(1);
    expect(lostSaves(saves, [upsert("src/a.js", "a1"), upsert("notes/1.md", "n1")])).toBe(1);
    expect(lostSaves(saves, [])).toBe(2);
  });

  it("holds a deletion to a deleted entry", () => {
    expect(lostSaves([{ "src/a.js": null }], [{ path: "src/a.js", op: "delete", sha256: null }])).toBe(0);
    expect(lostSaves([{ "src/a.js": null }], [upsert("src/a.js", "a1")])).toBe(1);
    expect(lostSaves([{ "src/a.js": null }], [])).toBe(1);
  });

  it("ignores files no acknowledged save wrote (a save answered 5xx that was stored anyway)", () => {
    expect(lostSaves([{ "src/a.js": "a1" }], [upsert("src/a.js", "a1"), upsert("notes/9.md", "n9")])).toBe(0);
  });
});

describe("latencyPercentiles", () => {
  it("takes the nearest rank, rounded", () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1.4);
    expect(latencyPercentiles(values)).toEqual({ p50: 50, p95: 95 });
    expect(latencyPercentiles([7.6])).toEqual({ p50: 8, p95: 8 });
  });

  it("is NaN for no samples", () => {
    expect(latencyPercentiles([])).toEqual({ p50: Number.NaN, p95: Number.NaN });
  });
});

describe("secondsToLast", () => {
  it("measures to the latest time, to a tenth of a second", () => {
    const since = Date.parse("2026-11-28T10:00:00.000Z");
    expect(secondsToLast(["2026-11-28T10:01:00.040Z", "2026-11-28T10:00:30.000Z"], since)).toBe(60);
    expect(secondsToLast(["2026-11-28T10:00:01.260Z"], since)).toBe(1.3);
    expect(secondsToLast([], since)).toBeNaN();
  });
});

describe("requestDurations", () => {
  it("reads the Worker's request lines of one method and route among the stack's other output", () => {
    const output = [
      `[api] {"level":"info","msg":"request","request_id":"r1","method":"PATCH","route":"/api/v1/attempts/:attempt_id/changes","status":200,"duration_ms":12,"user_id":"u"}`,
      `[api] {"level":"info","msg":"request","request_id":"r2","method":"POST","route":"/api/v1/attempts/:attempt_id/changes","status":405,"duration_ms":3,"user_id":null}`,
      `[runner] {"level":"info","msg":"request","method":"PATCH","route":"/api/v1/attempts/:attempt_id/changes"}`,
      `[api] [wrangler:info] PATCH /api/v1/attempts/a/changes 200 OK (15ms)`,
      `[api] {"level":"info","msg":"request","request_id":"r3","method":"PATCH","route":"/api/v1/attempts/:attempt_id/changes","status":409,"duration_ms":40,"user_id":"u"}`,
    ].join("\n");
    expect(requestDurations(output, "PATCH", "/api/v1/attempts/:attempt_id/changes")).toEqual([12, 40]);
  });
});

describe("requestMix", () => {
  it("tallies wrangler's request lines by method and route, ids, storage keys and queries left out, most first", () => {
    const output = [
      "[api] [wrangler:info] PATCH /api/v1/attempts/att_62054246454f4a6eafecf76760369df3/changes 200 OK (75ms)",
      "[api] [wrangler:info] GET /api/v1/attempts/att_62054246454f4a6eafecf76760369df3/runs/run_0123456789abcdef0123 200 OK (5ms)",
      "[api] [wrangler:info] PATCH /api/v1/attempts/att_bf3040c95c534c3e859af7f42f3b00ef/changes 200 OK (385ms)",
      "[api] [wrangler:info] GET /api/v1/storage/tasks%2Ftsk_260f43da21ab4e51b0d150c1d9cf2aba%2Fsnapshot.tar.gz?sig=abc 200 OK (9ms)",
      "[api] [wrangler:info] GET /api/v1/me 200 OK (3ms)",
      `[api] {"level":"info","msg":"request","method":"PATCH"}`,
    ].join("\n");
    expect(requestMix(output)).toEqual([
      ["PATCH /api/v1/attempts/:id/changes", 2],
      ["GET /api/v1/attempts/:id/runs/:id", 1],
      ["GET /api/v1/storage/:id", 1],
      ["GET /api/v1/me", 1],
    ]);
  });
});

describe("cpuMsFromStat", () => {
  it("adds user and system time, in ms, past a command name with spaces and parentheses", () => {
    const stat = "4242 (work (er) d) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 8 0 100 0 0";
    expect(cpuMsFromStat(stat)).toBe(12_900);
  });
});
