import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort } from "../../scripts/lib/stack";

// The stack's ports are chosen before its parts bind them, while other tests' servers bind port 0:
// a port from below the kernel's ephemeral range cannot be handed to one of them in between.
describe("freePort", () => {
  it("answers ports below the ephemeral range that can be listened on", async () => {
    const ephemeral = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 5 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeLessThan(ephemeral);
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

});
