import { describe, expect, it } from "vitest";
import { configFromEnv, egressSocketPath, workDirProblem } from "../src/config";

const SECRET = "a-runner-secret-of-32-characters";

describe("the runner's configuration", () => {
  it("takes a work dir that leaves room for its sockets' paths", () => {
    const workDir = "/var/tmp/assay-runner/abcdef123456";
    expect(workDirProblem(workDir)).toBeNull();
    expect(configFromEnv({ RUNNER_SECRET: SECRET, RUNNER_WORK_DIR: workDir }).workDir).toBe(workDir);
    expect(Buffer.byteLength(egressSocketPath(workDir, "0".repeat(12)))).toBeLessThanOrEqual(107);
  });

  it("refuses at start a work dir too long for a Unix socket's path, saying how long it may be", () => {
    const workDir = `/srv/${"w".repeat(90)}`;
    expect(() => configFromEnv({ RUNNER_SECRET: SECRET, RUNNER_WORK_DIR: workDir })).toThrow(/RUNNER_WORK_DIR .* is 95 bytes long; .* it may have at most 81: choose a shorter directory/);
  });
});
