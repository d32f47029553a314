import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

// Headless Debian Chromium with its background networking off: the machines have no
// internet, so the pages must render from the API's own assets alone.
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

describe("live API docs in a browser", () => {
  let browser: Browser;
  const outsideRequests: string[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
  });
  afterAll(async () => browser?.close());

  async function open(path: string) {
    const page = await browser.newPage();
    const api = new URL(inject("apiUrl"));
    page.on("request", (req) => {
      const url = new URL(req.url());
      if (url.protocol.startsWith("http") && url.host !== api.host) outsideRequests.push(req.url());
    });
    await page.goto(`${api.origin}${path}`);
    return page;
  }

  it("Swagger UI shows the API's operations", async () => {
    const page = await open("/api/v1/docs");
    await page.locator(".opblock-summary-path", { hasText: "/api/v1/me" }).first().waitFor({ timeout: 30_000 });
    const paths = await page.locator(".opblock-summary-path").allInnerTexts();
    expect(paths.map((p) => p.replace(/\u200b/g, ""))).toEqual(expect.arrayContaining(["/api/v1/me", "/health"]));
    expect(outsideRequests).toEqual([]);
    await page.close();
  });

  it("ReDoc shows the API's operations", async () => {
    const page = await open("/api/v1/redoc");
    await page.locator("h2", { hasText: "The caller and their organization memberships" }).waitFor({ timeout: 30_000 });
    expect(await page.title()).toContain("ReDoc");
    expect(await page.locator("body").innerText()).toContain("Service status and version");
    expect(outsideRequests).toEqual([]);
    await page.close();
  });
});
