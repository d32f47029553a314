// Candidate programs the interactive and execution-session tests run in the sandbox.

export const NODE_ECHO = `const rl = require("node:readline").createInterface({ input: process.stdin });
console.log("ready");
rl.on("line", (line) => console.log("echo:" + line));
rl.on("close", () => { console.log("bye"); process.exit(7); });
`;
export const PYTHON_ECHO = `import sys
print("ready")
while True:
    line = sys.stdin.readline()
    if not line:
        break
    print("echo:" + line.rstrip("\\n"))
print("bye")
sys.exit(7)
`;
export const NODE_IGNORES_TERM = `process.on("SIGTERM", () => console.log("ignored TERM"));
console.log("ready");
setInterval(() => {}, 1000);
`;
export const PYTHON_IGNORES_TERM = `import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready")
while True:
    time.sleep(1)
`;
export const NODE_CHILDREN = `const { spawn } = require("node:child_process");
spawn("sleep", ["1000"], { detached: true, stdio: "ignore" }).unref();
spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" }).unref();
setTimeout(() => { console.log("children up"); if (process.argv.includes("exit")) process.exit(3); }, 300);
setInterval(() => {}, 1000);
`;
