import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths";
import { waitUntil } from "../../scripts/lib/wait";

// A stack runs in a process group of its own (scripts/lib/stack.ts), out of reach of a signal to
// the script that started it; endWithThisProcess must stop that group when the script is stopped.
const dir = mkdtempSync(join(tmpdir(), "assay-stack-signals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A script that starts a detached group (standing in for the stack), ties it or not, and prints its pid. */
async function scriptWithGroup(tie: boolean) {
  const file = join(dir, `script-${tie}.ts`);
  writeFileSync(
    file,
    `import { spawn } from "node:child_process";
import { endWithThisProcess } from ${JSON.stringify(join(ROOT, "scripts/lib/stack.ts"))};
const group = spawn("sleep", ["600"], { detached: true, stdio: "ignore" });
${tie ? "endWithThisProcess(group.pid!);" : ""}
console.log(group.pid);
setInterval(() => undefined, 1000);
`,
  );
  const script = spawn(join(ROOT, "node_modules/.bin/tsx"), [file], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(createInterface({ input: script.stdout }), "line")) as [string];
  return { script, groupPid: Number(line) };
}

describe("a script's stack ends with the script", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("on %s the tied group is stopped and the script exits %i", async (signal, code) => {
    const { script, groupPid } = await scriptWithGroup(true);
    expect(alive(groupPid)).toBe(true);
    const exited = once(script, "exit");
    script.kill(signal);
    expect((await exited)[0]).toBe(code);
    await waitUntil(`the group ${groupPid} to end`, () => !alive(groupPid), { timeoutMs: 10_000, intervalMs: 50 });
  });

  it("an untied group outlives the script (what the tie is for)", async () => {
    const { script, groupPid } = await scriptWithGroup(false);
    const exited = once(script, "exit");
    script.kill("SIGINT");
    await exited;
    expect(alive(groupPid)).toBe(true);
    process.kill(-groupPid, "SIGKILL");
  });
});
