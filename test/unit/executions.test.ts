import { describe, expect, it } from "vitest";
import {
  clientEffect,
  commandProblem,
  concurrencyRefusal,
  EXECUTION_LIMITS,
  exitByObject,
  exitFromRunner,
  parseRunnerMessage,
} from "../../src/domain/executions";

describe("commandProblem", () => {
  it("admits node and python programs by their endings only", () => {
    expect(commandProblem("node", "src/main.js")).toBeUndefined();
    expect(commandProblem("node", "a.mjs")).toBeUndefined();
    expect(commandProblem("python", "app/run.py")).toBeUndefined();
    expect(commandProblem("node", "main.py")).toMatch(/must end in .js/);
    expect(commandProblem("python", "main.sh")).toMatch(/must end in .py/);
    expect(commandProblem("python", "-c.py")).toMatch(/interpreter option/);
  });
});

describe("clientEffect", () => {
  it("turns the owner's stdin and terminate into runner commands", () => {
    expect(clientEffect('{"type":"stdin","data":"x\\n"}', "owner", "running")).toEqual({ kind: "runner", messages: [{ type: "stdin", data: "x\n" }] });
    expect(clientEffect('{"type":"stdin","data":"","eof":true}', "owner", "starting")).toEqual({
      kind: "runner",
      messages: [{ type: "stdin", data: "" }, { type: "stdin", eof: true }],
    });
    expect(clientEffect('{"type":"terminate"}', "owner", "queued")).toEqual({ kind: "runner", messages: [{ type: "terminate" }] });
  });

  it("answers everything else with an error that says why", () => {
    const error = (raw: string | ArrayBuffer, role: "owner" | "staff" = "owner", status: "running" | "exited" = "running") => {
      const effect = clientEffect(raw, role, status);
      if (effect.kind !== "error") throw new Error(`expected an error, got ${JSON.stringify(effect)}`);
      return effect.detail;
    };
    expect(error("{")).toMatch(/not JSON/);
    expect(error("[]")).toMatch(/Unknown message type null/);
    expect(error('{"type":"exec"}')).toMatch(/Unknown message type "exec"/);
    expect(error('{"type":"stdin","data":1}')).toMatch(/Invalid stdin message: data/);
    expect(error('{"type":"stdin","eof":false}')).toMatch(/needs data/);
    expect(error('{"type":"terminate","force":true}')).toMatch(/Invalid terminate message/);
    expect(error(new ArrayBuffer(2))).toMatch(/Binary frames/);
    expect(error('{"type":"terminate"}', "staff")).toMatch(/read-only/);
    expect(error('{"type":"stdin","data":"x"}', "owner", "exited")).toMatch(/has ended \(exited\)/);
    // The limit is on UTF-8 bytes, not characters: 3 bytes each.
    const chars = Math.floor(EXECUTION_LIMITS.stdinMessageBytes / 3) + 1;
    expect(error(JSON.stringify({ type: "stdin", data: "€".repeat(chars) }))).toMatch(/over the 65536-byte limit/);
  });
});

describe("runner messages", () => {
  it("parses the runner's messages and drops what is not one", () => {
    expect(parseRunnerMessage('{"type":"output","stream":"stdout","data":"hi"}')).toEqual({ type: "output", stream: "stdout", data: "hi" });
    expect(parseRunnerMessage('{"type":"output","stream":"fd3","data":"hi"}')).toBeUndefined();
    expect(parseRunnerMessage("nope")).toBeUndefined();
    expect(parseRunnerMessage(new ArrayBuffer(1))).toBeUndefined();
  });

  it("maps the runner's exit, dropping causes it does not know", () => {
    const exit = exitFromRunner({ type: "exit", status: "killed", cause: "output_limit", code: null, signal: "SIGKILL", truncated: true, error: null, timings: { setup_ms: 3, run_ms: 40 } }, 50);
    expect(exit).toEqual({ status: "killed", cause: "output_limit", code: null, signal: "SIGKILL", truncated: true, detail: null, timings: { setup_ms: 3, run_ms: 40, total_ms: 50 } });
    expect(exitFromRunner({ type: "exit", status: "exited", cause: "cosmic-ray" }, 1).cause).toBeNull();
    expect(exitByObject("terminated", 1)).toMatchObject({ status: "killed", cause: "terminated" });
    expect(exitByObject("wall", 1)).toMatchObject({ status: "timed_out", cause: "wall" });
    expect(exitByObject("runner_lost", 1)).toMatchObject({ status: "error", cause: "runner_lost" });
  });

  it("says which limit refused an execution", () => {
    expect(concurrencyRefusal("user", 3)).toMatchObject({ kind: "rate_limited", retryAfterSeconds: EXECUTION_LIMITS.retryAfterSeconds, detail: expect.stringMatching(/^You have 3/) });
    expect(concurrencyRefusal("attempt", 2).detail).toMatch(/^This attempt has 2/);
  });
});
