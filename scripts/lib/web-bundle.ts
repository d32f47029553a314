// The web app's build output (public/app/, made by scripts/lib/web-build.ts) as a browser downloads
// it: sizes gzipped, and what one page needs. Shared by the build, the bench and the budget test.
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Metafile } from "esbuild";
import { ROOT } from "./paths";

export const WEB_OUT = join(ROOT, "public", "app");

export interface BundleSize {
  file: string;
  bytes: number;
  gzipBytes: number;
}

/** Every JavaScript and CSS file of the build with its size, gzipped as a CDN would send it. */
export function bundleSizes(metafile: Metafile): BundleSize[] {
  return Object.keys(metafile.outputs)
    .filter((f) => f.endsWith(".js") || f.endsWith(".css"))
    .map((f) => {
      const data = readFileSync(join(ROOT, f));
      return { file: basename(f), bytes: data.length, gzipBytes: gzipSync(data, { level: 9 }).length };
    });
}

/**
 * What a browser downloads to show one page of the app: the entry bundle, the stylesheet, the
 * page's chunk and every chunk these import, statically or dynamically (the terminal, the
 * editor's language pack), but for the dynamic imports `skip` names by their source. Gzipped.
 */
export function pageWeight(metafile: Metafile, page: string, skip: (source: string) => boolean = () => false): { files: BundleSize[]; gzipBytes: number } {
  const outputs = metafile.outputs;
  const byEntry = (source: string) => {
    const found = Object.entries(outputs).find(([, o]) => o.entryPoint === source);
    if (!found) throw new Error(`the build has no output for ${source}`);
    return found[0];
  };
  const main = byEntry("web/src/main.tsx");
  const seen = new Set<string>([byEntry("web/src/styles.css")]);
  // The entry's own dynamic imports are the other pages: only its static imports come with it.
  const visit = (file: string, dynamic: boolean) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const imported of outputs[file]?.imports ?? []) {
      if (imported.external) continue;
      const source = outputs[imported.path]?.entryPoint;
      if (imported.kind === "import-statement") visit(imported.path, dynamic);
      else if (dynamic && imported.kind === "dynamic-import" && !(source && skip(source))) visit(imported.path, dynamic);
    }
  };
  visit(main, false);
  visit(byEntry(page), true);
  const sizes = new Map(bundleSizes(metafile).map((s) => [s.file, s]));
  const files = [...seen].map((f) => sizes.get(basename(f))).filter((s): s is BundleSize => s !== undefined);
  return { files, gzipBytes: files.reduce((n, f) => n + f.gzipBytes, 0) };
}

const LANGUAGE_PACKS = "web/src/candidate/languages/";

/** The candidate's workspace for a task in each language the editor knows: it loads that language's pack only. */
export function workspaceWeights(metafile: Metafile): { language: string; files: number; gzipBytes: number }[] {
  const packs = Object.values(metafile.outputs)
    .map((o) => o.entryPoint)
    .filter((e): e is string => e?.startsWith(LANGUAGE_PACKS) === true);
  return packs.map((pack) => {
    const weight = pageWeight(metafile, "web/src/candidate/workspace-page.tsx", (source) => source.startsWith(LANGUAGE_PACKS) && source !== pack);
    return { language: basename(pack).replace(/\.tsx?$/, ""), files: weight.files.length, gzipBytes: weight.gzipBytes };
  });
}

