import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchChromium } from "../support/node/browser";

describe("live API docs in a browser", () => {
  let browser: Browser;
  const outsideRequests: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
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
