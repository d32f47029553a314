// Building the web app (web/) into public/app/ with esbuild: one hashed entry bundle with its
// split chunks, one stylesheet, and index.html pointing at them. Used by set-up, the deploy, the
// build command (scripts/web/build.ts) and the tests. Source maps: docs/web-app.md, "Building".
import { build, type BuildOptions, type Metafile } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
import { z } from "zod";
import { ROOT } from "./paths";
import { WEB_OUT } from "./web-bundle";

/**
 * `development` (set-up for npm start and npm test, `--watch`) links source maps beside the
 * bundles for the browser's tools. `production` serves none: a map carries the app's whole
 * source, and everything in public/ is uploaded and served; `sourcemapDir` writes them to a
 * directory that is not.
 */
export interface WebBuild {
  mode: "development" | "production";
  /** Production only: where the source maps go. */
  sourcemapDir?: string;
  /** public/app/ unless a test builds elsewhere. */
  outDir?: string;
}

/** Set-up's record, in the output directory, of the sources it built there (scripts/setup.ts). */
export const SOURCES_STAMP = ".sources";

/** The env var that asks a production build for its source maps, and where to put them. */
const SOURCEMAP_ENV = "WEB_SOURCEMAP_DIR";

export function webBuildOptions(target: WebBuild): BuildOptions {
  const outDir = target.outDir ?? WEB_OUT;
  return {
    entryPoints: [join(ROOT, "web/src/main.tsx"), join(ROOT, "web/src/styles.css")],
    outdir: join(outDir, "assets"),
    bundle: true,
    splitting: true,
    format: "esm",
    target: "es2022",
    minify: true,
    // `external` writes the maps without the sourceMappingURL comment: nothing served names them.
    sourcemap: target.mode === "development" ? "linked" : target.sourcemapDir ? "external" : false,
    entryNames: "[name]-[hash]",
    chunkNames: "chunk-[hash]",
    metafile: true,
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    logLevel: "warning",
    absWorkingDir: ROOT,
  };
}

/**
 * The production build's target from the environment: `WEB_SOURCEMAP_DIR` asks for source maps
 * there. A directory inside public/ would be uploaded and served with the app, so it is refused.
 */
export function productionBuild(env: NodeJS.ProcessEnv): WebBuild {
  const dir = z.string().trim().optional().parse(env[SOURCEMAP_ENV]);
  if (!dir) return { mode: "production" };
  const sourcemapDir = resolve(ROOT, dir);
  if (relative(join(ROOT, "public"), sourcemapDir).split(sep)[0] !== "..") {
    throw new Error(`${SOURCEMAP_ENV}=${dir} is inside public/, which is served: choose a directory outside it`);
  }
  return { mode: "production", sourcemapDir };
}

/** index.html with the hashed names of the entry script and stylesheet. */
export function writeIndex(metafile: Metafile, outDir: string): void {
  const outputs = Object.entries(metafile.outputs);
  const entry = (source: string) => {
    const found = outputs.find(([, o]) => o.entryPoint === source);
    if (!found) throw new Error(`the build has no output for ${source}`);
    return `/app/assets/${basename(found[0])}`;
  };
  const html = readFileSync(join(ROOT, "web/index.html"), "utf8")
    .replace("%SCRIPT%", entry("web/src/main.tsx"))
    .replace("%STYLE%", entry("web/src/styles.css"));
  writeFileSync(join(outDir, "index.html"), html);
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
  hash.update(readFileSync(join(ROOT, "scripts/lib/web-build.ts")));
  return hash.digest("hex");
}

/**
 * Builds in place and then removes the files of earlier builds: a running `wrangler dev` serves
 * public/ and loses track of it when the directory itself is removed and made again.
 */
export async function buildWebApp(target: WebBuild): Promise<Metafile> {
  const outDir = target.outDir ?? WEB_OUT;
  const assets = join(outDir, "assets");
  mkdirSync(assets, { recursive: true });
  // Whatever set-up built is gone now; the next set-up builds for development again.
  rmSync(join(outDir, SOURCES_STAMP), { force: true });
  const result = await build(webBuildOptions(target));
  const metafile = result.metafile!;
  writeIndex(metafile, outDir);
  writeFileSync(join(outDir, "meta.json"), JSON.stringify(metafile));
  const mapsTo = target.mode === "production" ? target.sourcemapDir : undefined;
  const served = new Set<string>();
  for (const name of Object.keys(metafile.outputs).map((o) => basename(o))) {
    if (mapsTo && name.endsWith(".map")) {
      mkdirSync(mapsTo, { recursive: true });
      renameSync(join(assets, name), join(mapsTo, name));
    } else served.add(name);
  }
  for (const name of readdirSync(assets)) if (!served.has(name)) rmSync(join(assets, name));
  return metafile;
}
