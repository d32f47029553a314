// The Worker's layers (docs/architecture in ../shared/design/architecture.md, README "Layout"):
//   routes/, queues/ → flows/ → durable/ → services/ → db/ → domain/ → lib/
// http/ is used by routes (and app.ts) only. env.ts is a declaration every layer may read; it
// imports nothing above domain/ (queue message bodies live in domain/queue-messages.ts).
// A layer may import itself and anything below it; `allowed` lists exactly that, so an
// import in any other direction, or a new top-level folder nobody placed, fails the check.
const layer = (name, below) => ({
  name: `${name}-imports-downward`,
  comment: `src/${name}/ may import only ${below.join(", ") || "itself"}`,
  severity: "error",
  from: { path: `^src/${name}/` },
  to: {
    path: "^src/",
    pathNot: [`^src/${name}/`, ...below.map((p) => `^src/${p}`)],
  },
});

const DECLARATIONS = ["env\\.ts$"];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import cycle ties modules that must be understood, tested and changed together.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    layer("lib", []),
    layer("domain", ["lib/"]),
    layer("db", ["domain/", "lib/"]),
    layer("services", ["db/", "domain/", "lib/", ...DECLARATIONS]),
    layer("http", ["services/", "db/", "domain/", "lib/", ...DECLARATIONS]),
    layer("durable", ["services/", "db/", "domain/", "lib/", ...DECLARATIONS]),
    layer("flows", ["durable/", "services/", "db/", "domain/", "lib/", ...DECLARATIONS]),
    layer("queues", ["flows/", "durable/", "services/", "db/", "domain/", "lib/", "env\\.ts$"]),
    layer("routes", ["http/", "flows/", "durable/", "services/", "db/", "domain/", "lib/", ...DECLARATIONS]),
    {
      name: "declarations-stay-low",
      comment: "env.ts is read by every layer, so it reads only domain/ and lib/",
      severity: "error",
      from: { path: "^src/env\\.ts$" },
      to: { path: "^src/", pathNot: ["^src/domain/", "^src/lib/", ...DECLARATIONS.map((d) => `^src/${d}`)] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
