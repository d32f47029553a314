// The web app: how soon the candidate's workspace is usable, in Chromium against the local
// stack (BENCH_API_URL with BENCH_IDP_URL and BENCH_REPOHOST_URL, else a stack of its own).
// A candidate signed in at the dev OpenID provider opens their attempt BENCH_LOADS (10) times:
//
// - warm: the browser's cache holds the bundles (a candidate reloading the page);
// - cold: the cache emptied before each load (a candidate's first visit), the bundles fetched again;
//
// each from the navigation to the editor showing the file, editable (the workspace's
// `assay:workspace-interactive` mark), the sign-in round trip through the provider included
// (the token lives in memory, so every load signs in again, without a form). Beside them: the
// workspace's download, gzipped, for a task in JavaScript (scripts/lib/web-bundle.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Metafile } from "esbuild";
import { launchChromium, signInAtDevProvider } from "../lib/browser";
import { launchStack } from "../lib/stack";
import { WEB_OUT, workspaceWeights } from "../lib/web-bundle";
import { benchClient, benchToken } from "./client";
import { percentile, type Emit } from "./metrics";

const LOADS = Number(process.env.BENCH_LOADS ?? 10);
const MARK = "assay:workspace-interactive";
const { api, expectStatus, readyTask } = benchClient(204);

export default async function webBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const base = given ?? stack!.apiUrl;
  const idp = process.env.BENCH_IDP_URL ?? stack!.idpUrl;
  const repohost = process.env.BENCH_REPOHOST_URL ?? stack!.repohostUrl;
  const browser = await launchChromium();
  try {
    const staff = await benchToken("bench-web-staff", "interviewer", "bench-org");
    const taskId = await readyTask(base, repohost, staff);
    const sub = `bench-web-${crypto.randomUUID().slice(0, 8)}`;
    const candidate = await benchToken(sub, "candidate");
    const attempt = await expectStatus("create an attempt", 201, api(base, "POST", "/attempts", candidate, { task_id: taskId }));
    const attemptId = String(attempt.body.id);
    await expectStatus("start", 200, api(base, "POST", `/attempts/${attemptId}/start`, candidate));

    const context = await browser.newContext();
    const page = await context.newPage();
    const url = `${base}/attempts/${attemptId}`;
    await page.goto(url);
    await signInAtDevProvider(page, idp, { email: `${sub}@example.test`, role: "candidate", sub });
    await page.waitForFunction((mark) => performance.getEntriesByName(mark).length > 0, MARK, { timeout: 60_000 });
    const cdp = await context.newCDPSession(page);

    let loads = 0;
    const load = async (): Promise<{ total: number; page: number }> => {
      // A client address per load, as for the other benches: the per-IP limits stay out of the figures.
      loads += 1;
      await page.setExtraHTTPHeaders({ "cf-connecting-ip": `10.204.${(loads >> 8) & 255}.${loads & 255}` });
      const started = Date.now();
      await page.goto(url);
      await page.waitForFunction((mark) => performance.getEntriesByName(mark).length > 0, MARK, { timeout: 60_000 });
      const inPage = await page.evaluate((mark) => performance.getEntriesByName(mark)[0]!.startTime, MARK);
      return { total: Date.now() - started, page: inPage };
    };
    const runs = { warm: [] as { total: number; page: number }[], cold: [] as { total: number; page: number }[] };
    for (let i = 0; i < LOADS; i++) {
      runs.warm.push(await load());
      await cdp.send("Network.clearBrowserCache");
      runs.cold.push(await load());
      console.error(`[bench] load ${i + 1}/${LOADS}: warm ${runs.warm[i]!.total} ms, cold ${runs.cold[i]!.total} ms`);
    }
    for (const [cache, samples] of Object.entries(runs)) {
      for (const p of [50, 95]) {
        emit({
          metric: `web_workspace_interactive_${cache}_p${p}_ms`,
          value: percentile(samples.map((s) => s.total), p),
          unit: "ms",
          samples: samples.length,
          last_document_ms: Math.round(percentile(samples.map((s) => s.page), p)),
          target_ms: 1500,
        });
      }
    }
    const meta = JSON.parse(readFileSync(join(WEB_OUT, "meta.json"), "utf8")) as Metafile;
    const js = workspaceWeights(meta).find((w) => w.language === "javascript")!;
    emit({ metric: "web_workspace_download_gzip_kb", value: Math.round(js.gzipBytes / 100) / 10, unit: "kB", files: js.files, budget_kb: 350 });
  } finally {
    await browser.close();
    await stack?.stop();
  }
}
