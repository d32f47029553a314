// Chromium for the e2e tests of the web app and the docs pages (scripts/lib/browser.ts), a
// user's browser profile, and axe-core run inside a page.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { beforeEach, onTestFailed } from "vitest";
import { launchChromium } from "../../../scripts/lib/browser";
import { freshIp } from "./http-client";

export { launchChromium };


/**
 * A browser profile of one user: its own cookies (the identity provider's session) and its own
 * client address, as the API's per-IP rate limits count a user's browser on its own.
 */
export async function userContext(browser: Browser, ip = freshIp()): Promise<BrowserContext & { ip: string }> {
  const context = await browser.newContext({ extraHTTPHeaders: { "cf-connecting-ip": ip } });
  return Object.assign(context, { ip });
}

/**
 * The tests of the suite being declared are one journey's steps: after a failed step the later
 * ones would only wait out their timeouts, so they are skipped, and what each user's page showed
 * is printed for the failure's report.
 */
export function stepsOfOneJourney(pages: () => Page[]): void {
  let failed: string | undefined;
  beforeEach((context) => {
    if (failed) context.skip(`an earlier step failed: ${failed}`);
    onTestFailed(async () => {
      failed = context.task.name;
      for (const page of pages()) {
        const text = await page.locator("body").innerText({ timeout: 2000 }).catch(() => "(no page)");
        console.error(`--- ${page.url()}\n${text.slice(0, 3000)}`);
      }
    });
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** The serious and critical accessibility violations axe-core finds on the page as it is now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol: the pages' CSP (script-src 'self') refuses an inline script tag.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: unknown) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
}
