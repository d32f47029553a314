import { spawn } from "node:child_process";

/** Runs a host utility (cp, chown, chmod) with a minimal environment; rejects with its stderr. */
export function runTool(cmd: string, args: string[], cwd?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ["ignore", "ignore", "pipe"], env: { PATH: "/usr/bin:/bin", LANG: "C" } });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8").slice(0, 2000)));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} failed: ${stderr.trim()}`))));
  });
}
