// Chromium driven by playwright-core (the machine's /usr/bin/chromium), for the browser tests
// and the web app's bench; and the dev OpenID provider's sign-in page, filled in as a person would.
import { chromium, type Browser, type Page } from "playwright-core";

// Headless Debian Chromium with its background networking off: the machines have no internet,
// so pages must work from the stack's own addresses alone.
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

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
}

export interface DevUser {
  email: string;
  role: string;
  org?: string;
  sub?: string;
}

/** Waits for the dev OpenID provider's sign-in page (scripts/dev-idp) and signs in as `who`. */
export async function signInAtDevProvider(page: Page, idpUrl: string, who: DevUser, timeout = 60_000): Promise<void> {
  await page.waitForURL((url) => url.origin === idpUrl && url.pathname.startsWith("/interaction/"), { timeout });
  await page.getByLabel("E-mail address").fill(who.email);
  await page.getByLabel("Role").selectOption(who.role);
  if (who.org) await page.getByLabel("Organization id (optional)").fill(who.org);
  if (who.sub) await page.getByLabel("User id (optional)").fill(who.sub);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL((url) => url.origin !== idpUrl && url.pathname !== "/auth/callback", { timeout });
}
