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

// Around the Worker: the tests (test/, sandbox-runner/test/) and the scripts (dev stack, demo,
// benchmarks, set-up). src/ imports neither; scripts/ imports no test; a test imports src/, the
// runner's sources, test support, and of scripts/ only the modules meant to be shared.
const TESTS = "^(test|sandbox-runner/test)/";
// What tests may take from scripts/: the libraries the scripts share (scripts/lib/) and the dev
// services and fixture builders tests start or test in-process; never a script's entry point,
// which runs when it is imported.
const SCRIPTS_FOR_TESTS = [
  "^scripts/lib/",
  "^scripts/dev-repohost/(server|repo-builder|demo-repos)\\.ts$",
  "^scripts/dev-repohost/demo/",
  "^scripts/dev-mail/server\\.ts$",
  "^scripts/dev-idp/server\\.ts$",
  "^scripts/templates/(catalogue|tar)\\.ts$",
];

// What the web app shares with the Worker, written once in protocol/: the socket messages (zod/mini
// schemas both ends parse with) and the rules the app states to its users (roles, subscores, file paths).
const WEB_SHARED = ["^protocol/socket-messages\\.ts$", "^protocol/assessment-rules\\.ts$"];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import cycle ties modules that must be understood, tested and changed together.",
      severity: "error",
      from: {},
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
    // A route validates, authorizes (http/) and calls one use case (flows/): it reaches no
    // storage, Durable Object or outside service itself.
    layer("routes", ["http/", "flows/", "domain/", "lib/", ...DECLARATIONS]),
    // Runner jobs have one owner (docs/runner-protocol.md, "Who owns a job"): the lifecycle flow
    // changes them, and everyone else, the consumer, the cron sweep, the runner's requests and the
    // AttemptDO, goes through it; services/runner is only the client and the connect token.
    {
      name: "runner-jobs-have-one-owner",
      comment:
        "Only flows/runner-jobs.flow.ts runs the runner-job queries: enqueue, dispatch, leases, requeues, give-up and results " +
        "change in one state machine. Another module may import their row type, never call them",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/flows/runner-jobs\\.flow\\.ts$" },
      to: { path: "^src/db/runner-jobs\\.queries\\.ts$", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "runner-service-is-the-client",
      comment:
        "services/runner/ holds the runner client and the connect token, and nothing else: no storage, no queries, " +
        "no other service (the job lifecycle that uses them is flows/runner-jobs.flow.ts)",
      severity: "error",
      from: { path: "^src/services/runner/" },
      to: { path: "^src/(db|services)/", pathNot: "^src/services/runner/" },
    },
    {
      name: "runner-service-holds-two-modules",
      comment: "Of services/runner/ only runner-client.ts and connect-token.ts are used; a module beside them belongs elsewhere (flows/runner-jobs.flow.ts for job state)",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^src/services/runner/", pathNot: "^src/services/runner/(runner-client|connect-token)\\.ts$" },
    },
    {
      name: "declarations-stay-low",
      comment: "env.ts is read by every layer, so it reads only domain/ and lib/",
      severity: "error",
      from: { path: "^src/env\\.ts$" },
      to: { path: "^src/", pathNot: ["^src/domain/", "^src/lib/", ...DECLARATIONS.map((d) => `^src/${d}`)] },
    },
    {
      name: "protocol-imports-only-zod",
      comment: "protocol/ is the contract the Worker shares with the runner and the web app: it imports zod and itself, nothing of ours, no runtime's modules",
      severity: "error",
      from: { path: "^protocol/" },
      to: { pathNot: ["^protocol/", "^node_modules/zod/"] },
    },
    {
      name: "client-imports-only-openapi-fetch",
      comment: "client/ is published on its own (@assay/api-client): it imports openapi-fetch and itself, nothing of ours",
      severity: "error",
      from: { path: "^client/" },
      to: { pathNot: ["^client/", "^node_modules/openapi-fetch/"] },
    },
    {
      name: "web-app-imports-itself-and-the-client",
      comment:
        "web/ runs in the browser and reaches the API only through the typed client: it imports itself, client/src, npm packages " +
        "and what protocol/ writes for it (WEB_SHARED); never src/, and never the runner's messages (they import all of zod)",
      severity: "error",
      from: { path: "^web/" },
      to: { pathNot: ["^web/", "^client/src/", "^node_modules/", ...WEB_SHARED] },
    },
    {
      name: "worker-and-runner-meet-in-protocol",
      comment: "The Worker shares only protocol/ with the runner: it never imports the runner's sources",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^sandbox-runner/" },
    },
    {
      name: "runner-and-worker-meet-in-protocol",
      comment: "The runner shares only protocol/ with the Worker: it imports none of the Worker's, the scripts' or the tests' code",
      severity: "error",
      from: { path: "^sandbox-runner/src/" },
      to: { path: "^(src|scripts|test|sandbox-runner/test)/" },
    },
    {
      name: "src-imports-no-tooling",
      comment: "The Worker stands alone: it never imports the scripts or the tests around it (nor the runner's: see above)",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(scripts|test)/" },
    },
    {
      name: "scripts-import-no-tests",
      comment: "Scripts never import tests or test/ support; the runner bench may reuse the runner's test doubles",
      severity: "error",
      from: { path: "^scripts/" },
      to: { path: TESTS, pathNot: "^sandbox-runner/test/support/" },
    },
    {
      name: "tests-take-from-scripts-what-is-shared",
      comment: `Tests import of scripts/ only ${SCRIPTS_FOR_TESTS.join(", ")}; anything else moves to scripts/lib/ first`,
      severity: "error",
      from: { path: TESTS },
      to: { path: "^scripts/", pathNot: SCRIPTS_FOR_TESTS },
    },
    {
      name: "nothing-imports-a-test-file",
      comment: "A test file is run, never imported (its suite would run twice); shared code goes to a support module",
      severity: "error",
      from: {},
      to: { path: "\\.test\\.ts$" },
    },
    {
      name: "workerd-tests-use-workerd-support",
      comment: "The integration tests run inside workerd: they and test/support/worker/ never import Node-only test code",
      severity: "error",
      from: { path: "^test/(integration|support/worker)/" },
      to: { path: "^test/(unit|e2e|support/node)/" },
    },
    {
      name: "node-tests-use-node-support",
      comment: "The unit and e2e tests and test/support/node/ run in Node: test/support/worker/ needs workerd",
      severity: "error",
      from: { path: "^test/(unit|e2e|support/node)/" },
      to: { path: "^test/(integration|support/worker)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // The dev repo host's fixture repositories are other projects' sources, not ours.
    exclude: { path: ["node_modules", "^scripts/dev-repohost/fixtures/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".d.ts", ".js"] },
  },
};
