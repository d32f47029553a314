import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths";
import { buildWebApp, productionBuild, webBuildOptions } from "../../scripts/lib/web-build";

// A source map carries the app's whole source; everything in public/ is uploaded and served, so
// a production build must leave none there, nor a comment naming one (docs/web-app.md, "Building").
const made: string[] = [];
const scratch = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `assay-web-${name}-`));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Every served file of a build in `outDir`: its assets and index.html. */
function served(outDir: string): { name: string; text: string }[] {
  const assets = readdirSync(join(outDir, "assets")).map((name) => ({ name, text: readFileSync(join(outDir, "assets", name), "utf8") }));
  return [...assets, { name: "index.html", text: readFileSync(join(outDir, "index.html"), "utf8") }];
}

describe("the web app's build", () => {
  it("for production serves no source map and names none", async () => {
    const outDir = scratch("prod");
    await buildWebApp({ ...productionBuild({}), outDir });
    const files = served(outDir);
    expect(files.some((f) => f.name.endsWith(".js"))).toBe(true);
    expect(files.some((f) => f.name.endsWith(".css"))).toBe(true);
    expect(files.filter((f) => f.name.endsWith(".map"))).toEqual([]);
    for (const f of files) expect(f.text, f.name).not.toMatch(/sourceMappingURL/);
  });

  it("for production with WEB_SOURCEMAP_DIR writes the maps there, with their sources, and still serves none", async () => {
    const outDir = scratch("prod-maps");
    const maps = join(scratch("maps"), "nested");
    const target = productionBuild({ WEB_SOURCEMAP_DIR: maps });
    expect(target).toEqual({ mode: "production", sourcemapDir: maps });
    await buildWebApp({ ...target, outDir });
    const files = served(outDir);
    expect(files.filter((f) => f.name.endsWith(".map"))).toEqual([]);
    for (const f of files) expect(f.text, f.name).not.toMatch(/sourceMappingURL/);
    const written = readdirSync(maps);
    for (const f of files.filter((x) => /\.(js|css)$/.test(x.name))) expect(written, f.name).toContain(`${f.name}.map`);
    const main = written.find((n) => /^main-[A-Z0-9]+\.js\.map$/.test(n));
    const map = JSON.parse(readFileSync(join(maps, main!), "utf8")) as { sources: string[]; sourcesContent: string[] };
    expect(map.sources.some((s) => s.endsWith("web/src/main.tsx"))).toBe(true);
    expect(map.sourcesContent.length).toBe(map.sources.length);
  });

  it.each(["public/maps", "public", "./public/app/assets", join(ROOT, "public", "x")])("refuses WEB_SOURCEMAP_DIR=%s, which is served", (dir) => {
    expect(() => productionBuild({ WEB_SOURCEMAP_DIR: dir })).toThrow(/inside public\/, which is served/);
  });

  it("keeps linked maps for development only", () => {
    expect(webBuildOptions({ mode: "development" }).sourcemap).toBe("linked");
    expect(webBuildOptions(productionBuild({})).sourcemap).toBe(false);
    expect(webBuildOptions(productionBuild({ WEB_SOURCEMAP_DIR: "" })).sourcemap).toBe(false);
    expect(webBuildOptions(productionBuild({ WEB_SOURCEMAP_DIR: "../maps" })).sourcemap).toBe("external");
    expect(productionBuild({ WEB_SOURCEMAP_DIR: "publication" })).toEqual({ mode: "production", sourcemapDir: join(ROOT, "publication") });
  });
});
