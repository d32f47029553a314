import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Metafile } from "esbuild";
import { describe, expect, it } from "vitest";
import { pageWeight, WEB_OUT, workspaceWeights } from "../../scripts/lib/web-bundle";

// The budget: the candidate's workspace, editor and terminal included, under 350 kB of
// JavaScript and CSS gzipped. Measured on the build set-up made (public/app/meta.json).
const BUDGET_BYTES = 350_000;

function builtMeta(): Metafile {
  const file = join(WEB_OUT, "meta.json");
  if (!existsSync(file)) throw new Error("public/app/meta.json is missing: npm test's set-up builds the web app (npm run web:build)");
  return JSON.parse(readFileSync(file, "utf8")) as Metafile;
}

describe("the web app's download budget", () => {
  it("the workspace for a task in any language the editor knows stays under 350 kB gzipped, its one language pack included", () => {
    const weights = workspaceWeights(builtMeta());
    expect(weights.map((w) => w.language).sort()).toEqual(["go", "java", "javascript", "python", "rust"]);
    for (const w of weights) expect(w.gzipBytes, w.language).toBeLessThan(BUDGET_BYTES);
  });

  it("the console's charts and the workspace's editor are not in each other's downloads", () => {
    const meta = builtMeta();
    const sources = (page: string) => {
      const files = new Set(pageWeight(meta, page).files.map((f) => f.file));
      return Object.entries(meta.outputs)
        .filter(([out]) => files.has(out.split("/").at(-1)!))
        .flatMap(([, o]) => Object.keys(o.inputs));
    };
    const workspace = sources("web/src/candidate/workspace-page.tsx");
    const analytics = sources("web/src/interviewer/analytics-page.tsx");
    expect(workspace.some((s) => s.includes("@codemirror/view"))).toBe(true);
    expect(workspace.some((s) => s.includes("uplot"))).toBe(false);
    expect(analytics.some((s) => s.includes("uplot"))).toBe(true);
    expect(analytics.some((s) => s.includes("@codemirror/") || s.includes("@xterm/"))).toBe(false);
  });
});
