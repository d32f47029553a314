// Runs inside a prepare job's sandbox, which has no network interface but loopback: listens
// on 127.0.0.1:<port> there and carries each connection to the runner's egress proxy through
// the Unix socket bound into the sandbox, then runs the install command with the proxy set.
// Usage: node egress-bridge.mjs <socket> <port> <command> [args...]
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";

const [socketPath, port, command, ...args] = process.argv.slice(2);
if (!socketPath || !port || !command) {
  console.error("usage: egress-bridge.mjs <socket> <port> <command> [args...]");
  process.exit(2);
}

const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
});
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(command, args, { stdio: "inherit" });
  child.on("error", (err) => {
    console.error(`cannot run ${command}: ${err.message}`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => process.exit(code ?? 128 + (signal === "SIGKILL" ? 9 : 15)));
});
