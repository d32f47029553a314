// `npm run billing:event` against a stand-in API: what it sends must pass Stripe's own
// verification with the secret it was given, and it must print the event and the answer.
import { execFile } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths";

const SECRET = "whsec_command_test";

interface Received {
  path: string;
  signature: string;
  body: string;
}
const received: Received[] = [];
let url = "";

const server = createServer((req: IncomingMessage, res) => {
  let body = "";
  req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
  req.on("end", () => {
    received.push({ path: req.url ?? "", signature: String(req.headers["stripe-signature"]), body });
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ received: true, outcome: "applied" }));
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function command(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const tsx = join(ROOT, "node_modules", ".bin", "tsx");
  return new Promise((resolve) => {
    execFile(tsx, [join(ROOT, "scripts/billing/send-event.ts"), ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe("npm run billing:event", () => {
  it("sends a signed event that Stripe's verification accepts, and prints it and the answer", async () => {
    const { code, stdout } = await command(["subscription.updated", "--org", "acme", "--plan", "enterprise", "--ago", "30", "--url", url, "--secret", SECRET]);
    expect(code).toBe(0);
    const [request] = received.splice(0);
    expect(request!.path).toBe("/api/v1/billing/stripe/webhook");
    const event = await Stripe.webhooks.constructEventAsync(request!.body, request!.signature, SECRET, 300, Stripe.createSubtleCryptoProvider());
    expect(event).toMatchObject({
      type: "customer.subscription.updated",
      data: {
        object: {
          id: "sub_dev_acme",
          customer: "cus_dev_acme",
          status: "active",
          metadata: { organization_id: "acme" },
          items: { data: [{ price: { lookup_key: "enterprise" } }] },
        },
      },
    });
    expect(Math.floor(Date.now() / 1000) - event.created).toBeGreaterThanOrEqual(30);
    expect(stdout).toContain(`POST ${url}/api/v1/billing/stripe/webhook`);
    expect(stdout).toContain(`Stripe-Signature: ${request!.signature}`);
    expect(stdout).toContain(request!.body);
    expect(stdout).toMatch(/HTTP 200\n\{"received":true,"outcome":"applied"\}/);
  });

  it("exits 2 with the usage for an unknown event or no organization, sending nothing", async () => {
    for (const args of [["subscription.renamed", "--org", "acme"], ["invoice.paid"]]) {
      const { code, stderr } = await command([...args, "--url", url, "--secret", SECRET]);
      expect(code).toBe(2);
      expect(stderr).toContain("usage: npm run billing:event");
    }
    expect(received).toEqual([]);
  });
});
