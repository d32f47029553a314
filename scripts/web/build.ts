// Builds the web app (web/) into public/app/ with esbuild: one hashed entry bundle with its
// split chunks, one stylesheet, and index.html pointing at them. The Worker serves
// public/app/index.html for every page of the app (src/routes/web-app.routes.ts).
// `--watch` rebuilds on change (npm start does); without it, builds once and prints sizes.
import { build, context, type BuildOptions, type Metafile } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { ROOT } from "../lib/paths";
import { bundleSizes, WEB_OUT, workspaceWeights } from "../lib/web-bundle";

const options: BuildOptions = {
  entryPoints: [join(ROOT, "web/src/main.tsx"), join(ROOT, "web/src/styles.css")],
  outdir: join(WEB_OUT, "assets"),
  bundle: true,
  splitting: true,
  format: "esm",
  target: "es2022",
  minify: true,
  sourcemap: "linked",
  entryNames: "[name]-[hash]",
  chunkNames: "chunk-[hash]",
  metafile: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning",
};

/** index.html with the hashed names of the entry script and stylesheet. */
function writeIndex(metafile: Metafile): void {
  const outputs = Object.entries(metafile.outputs);
  const entry = (source: string) => {
    const found = outputs.find(([, o]) => o.entryPoint === source);
    if (!found) throw new Error(`the build has no output for ${source}`);
    return `/app/assets/${basename(found[0])}`;
  };
  const html = readFileSync(join(ROOT, "web/index.html"), "utf8")
    .replace("%SCRIPT%", entry("web/src/main.tsx"))
    .replace("%STYLE%", entry("web/src/styles.css"));
  writeFileSync(join(WEB_OUT, "index.html"), html);
}

/** A digest of everything the build reads of ours: the app, the API client, the lockfile. */
export function webSourcesDigest(): string {
  const hash = createHash("sha256");
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else hash.update(path).update(readFileSync(join(ROOT, path)));
    }
  };
  walk("web");
  walk("client/src");
  hash.update(readFileSync(join(ROOT, "package-lock.json")));
  hash.update(readFileSync(join(ROOT, "scripts/web/build.ts")));
  return hash.digest("hex");
}

/**
 * Builds in place and then removes the files of earlier builds: a running `wrangler dev` serves
 * public/ and loses track of it when the directory itself is removed and made again.
 */
export async function buildWebApp(): Promise<Metafile> {
  mkdirSync(WEB_OUT, { recursive: true });
  const result = await build({ ...options, absWorkingDir: ROOT });
  const metafile = result.metafile!;
  writeIndex(metafile);
  writeFileSync(join(WEB_OUT, "meta.json"), JSON.stringify(metafile));
  const current = new Set(Object.keys(metafile.outputs).map((f) => basename(f)));
  const assets = join(WEB_OUT, "assets");
  for (const name of readdirSync(assets)) if (!current.has(name)) rmSync(join(assets, name));
  return metafile;
}

async function watch(): Promise<void> {
  const ctx = await context({
    ...options,
    absWorkingDir: ROOT,
    plugins: [
      {
        name: "index-html",
        setup(b) {
          b.onEnd((result) => {
            if (result.metafile && result.errors.length === 0) {
              writeIndex(result.metafile);
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
    const meta = await buildWebApp();
    for (const w of workspaceWeights(meta)) {
      console.log(`the candidate's workspace (${w.language}): ${(w.gzipBytes / 1000).toFixed(1)} kB gzipped in ${w.files} files`);
    }
    for (const s of bundleSizes(meta)) console.log(`${s.file.padEnd(40)} ${(s.bytes / 1024).toFixed(1).padStart(8)} KiB  ${(s.gzipBytes / 1024).toFixed(1).padStart(7)} KiB gzipped`);
  }
}
