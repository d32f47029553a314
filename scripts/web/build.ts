// `npm run web:build`: builds the web app (web/) into public/app/ for production, as
// `npm run deploy` does, and prints sizes; `--watch` rebuilds on change for development (npm
// start does). The Worker serves public/app/index.html for every page of the app
// (src/routes/web-app.routes.ts). Source maps: docs/web-app.md, "Building".
import { context } from "esbuild";
import { basename } from "node:path";
import { bundleSizes, WEB_OUT, workspaceWeights } from "../lib/web-bundle";
import { buildWebApp, productionBuild, webBuildOptions, writeIndex } from "../lib/web-build";

async function watch(): Promise<void> {
  const ctx = await context({
    ...webBuildOptions({ mode: "development" }),
    plugins: [
      {
        name: "index-html",
        setup(b) {
          b.onEnd((result) => {
            if (result.metafile && result.errors.length === 0) {
              writeIndex(result.metafile, WEB_OUT);
              console.log("web app rebuilt");
            }
          });
        },
      },
    ],
  });
  await ctx.watch();
}

if (process.argv[1] && basename(process.argv[1]).startsWith("build")) {
  if (process.argv.includes("--watch")) await watch();
  else {
    const meta = await buildWebApp(productionBuild(process.env));
    for (const w of workspaceWeights(meta)) {
      console.log(`the candidate's workspace (${w.language}): ${(w.gzipBytes / 1000).toFixed(1)} kB gzipped in ${w.files} files`);
    }
    for (const s of bundleSizes(meta)) console.log(`${s.file.padEnd(40)} ${(s.bytes / 1024).toFixed(1).padStart(8)} KiB  ${(s.gzipBytes / 1024).toFixed(1).padStart(7)} KiB gzipped`);
  }
}
