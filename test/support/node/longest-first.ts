import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take minutes, longest first (seconds in the last clean clone). Two workers
 * take files in order, so a long file started late makes the run's tail: on a clean clone
 * vitest has no timings and orders by file size, and forging.test.ts (small, 263 s) started
 * 64th of 72 in its project. Where vitest has timings of every file (a second local run), it
 * orders by them, and this list only moves files it would put near the front anyway.
 */
const LONGEST = [
  "test/e2e/real-repos.test.ts", // 405
  "sandbox-runner/test/forging.test.ts", // 263
  "sandbox-runner/test/honest-modes.test.ts", // 159
  "test/e2e/web-app-pace.test.ts", // 116-182 alone
  "test/e2e/web-app.test.ts", // 154
  "test/e2e/runner-fleet.test.ts", // 139
  "sandbox-runner/test/framework-majors.test.ts", // 139
  "sandbox-runner/test/framework-canaries.test.ts", // 101
  "sandbox-runner/test/framework-runs.test.ts", // 99
  "sandbox-runner/test/mocha-family-majors.test.ts", // 73
  "test/e2e/cheating.test.ts", // 61
  "sandbox-runner/test/mocha-family.test.ts", // 44
  "sandbox-runner/test/install.test.ts", // 39
];

const rank = (spec: TestSpecification): number => {
  const index = LONGEST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
  return index === -1 ? LONGEST.length : index;
};

/** vitest's order (projects apart, so workers stay with one project), with the listed files first in each project. */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const position = new Map(sorted.map((spec, i) => [spec, i]));
    const projects = new Map<string, number>();
    for (const spec of sorted) if (!projects.has(spec.project.name)) projects.set(spec.project.name, projects.size);
    return [...sorted].sort(
      (a, b) => projects.get(a.project.name)! - projects.get(b.project.name)! || rank(a) - rank(b) || position.get(a)! - position.get(b)!,
    );
  }
}
