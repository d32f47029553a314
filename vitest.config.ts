import { availableParallelism } from "node:os";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig, defineProject } from "vitest/config";
import LongestFirst from "./test/support/node/longest-first.ts";
import { testIdentity } from "./test/support/node/test-identity.ts";

/**
 * The e2e file that spends minutes waiting on a person's pauses between clicks, against a stack
 * of its own and beside the other e2e files: after them on the shared stack it would make that
 * run the suite's longest. (runner-fleet.test.ts, with a stack of its own too, failed its drain
 * case twice out of two here, beside three runs at once; it stays with the shared stack's files.)
 */
const PACED = ["test/e2e/web-app-pace.test.ts"];

/** Real processes driven over HTTP: a project's files run one at a time against the one stack its global set-up starts. */
function e2eProject(name: string, include: string[], exclude: string[] = []) {
  return defineProject({
    test: {
      name,
      include,
      exclude: [...configDefaults.exclude, ...exclude],
      environment: "node",
      globalSetup: ["./test/support/node/e2e-stack.ts"],
      setupFiles: ["./test/support/node/e2e-ready.ts"],
      fileParallelism: false,
      testTimeout: 120_000,
      hookTimeout: 300_000,
    },
  });
}

// The suites: pure logic (unit), the sandbox runner service (runner), the Worker inside
// workerd with real local D1/R2/DOs/Queues (integration), and real processes driven over
// HTTP (e2e, e2e-paced). `npm test` runs them as three `vitest run`s side by side
// (scripts/test.ts); `npx vitest run` runs them all in one.
export default defineConfig({
  test: {
    // vitest's default leaves one core free; these files spend much of their time waiting on
    // sandboxes, queues and child processes, so even two cores take two files at a time
    // (on two cores: 898 s with one, 629 s with two). The e2e files run one at a time: a
    // project's files share one stack.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Request logs are noise on green runs; they are printed for failing tests.
    silent: "passed-only",
    sequence: { sequencer: LongestFirst },
    projects: [
      defineProject({
        // Pure logic and in-process servers: no file leaves state in shared modules (timers are
        // restored, nothing is mocked), so the files share workers instead of paying ~1 s each
        // for a fresh one.
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node", isolate: false },
      }),
      defineProject({
        test: {
          name: "runner",
          include: ["sandbox-runner/test/**/*.test.ts"],
          // Each file starts its own runner on its own work dir and sandbox uids and leaves no
          // process state behind, so files share workers: a fresh one cost ~1 s and the
          // runner's modules (TypeScript's parser among them) loaded again.
          isolate: false,
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      }),
      defineProject({
        plugins: [
          cloudflareTest(async ({ inject }) => {
            const identity = await testIdentity();
            return {
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  ...identity.bindings,
                  TEST_MIGRATIONS: await readD1Migrations("./migrations"),
                  TEST_SIGNING_JWK: identity.privateJwk,
                  // Presigned URLs point at the host the tests' `call` uses; the runner is
                  // faked at its URL by the tests that dispatch jobs.
                  APP_BASE_URL: "https://assay.test",
                  RUNNER_URL: "http://runner.test",
                  RUNNER_SECRET: "integration-runner-secret",
                  // The backlog endpoint's own token (test/integration/runner-backlog.test.ts).
                  RUNNER_BACKLOG_TOKEN: "integration-backlog-token",
                  URL_SIGNING_SECRET: "integration-url-signing-secret",
                  // Invitation e-mails land in R2's outbox/; the HTTP provider is tested with a stand-in.
                  EMAIL_PROVIDER: "outbox",
                  // AI chat answers from the deterministic local stand-in; the OpenAI-compatible
                  // provider is tested against a stand-in endpoint at this URL.
                  AI_PROVIDER: "local",
                  AI_OPENAI_URL: "http://ai.test/v1",
                  TOKEN_ENCRYPTION_KEY: "integration-token-encryption-key",
                  // A dev repo host with the fixture repositories, started by the global set-up.
                  REPOHOST_ENTERPRISE_HOSTS: inject<string>("repohostUrl"),
                  TASK_IMPORT_RETRY_BASE_SECONDS: "1",
                  // The billing tests sign Stripe events with it (scripts/lib/stripe-events.ts).
                  STRIPE_WEBHOOK_SECRET: "whsec_integration",
                },
              },
            };
          }),
        ],
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          // One workerd per worker rather than per file (257 against 108 CPU-s for the
          // project); each file starts on an emptied database (apply-migrations.ts).
          isolate: false,
          // Queue deliveries take about a second each; pipelines of several take seconds.
          testTimeout: 30_000,
          globalSetup: ["./test/support/node/repohost-setup.ts"],
          setupFiles: ["./test/support/worker/apply-migrations.ts"],
        },
      }),
      e2eProject("e2e", ["test/e2e/**/*.test.ts"], PACED),
      e2eProject("e2e-paced", PACED),
    ],
  },
});
