import { describe, expect, it } from "vitest";
import { installVersions, noInstallStepsText } from "../../../web/src/interviewer/install-words";

const step = { name: "npm ci", exit_code: 0, ok: true, duration_ms: 1200, hint: null };

describe("an import's install in words", () => {
  it("names the versions it ran with", () => {
    expect(installVersions({ steps: [], failure: null, node: "22.11.0", python: null })).toBe("Node 22.11.0");
    expect(installVersions({ steps: [], failure: null, node: "22.11.0", python: "3.12" })).toBe("Node 22.11.0, Python 3.12");
  });

  it("says in words that no step ran instead of showing an empty table", () => {
    expect(noInstallStepsText({ steps: [], failure: null, node: "22.11.0", python: null })).toBe(
      "No install steps ran (Node 22.11.0): the repository has no lockfile, manifest or requirements that need installing.",
    );
    expect(noInstallStepsText({ steps: [], failure: "the sandbox failed", node: "22.11.0", python: null })).toBe("No install steps ran (Node 22.11.0).");
    expect(noInstallStepsText({ steps: [step], failure: null, node: "22.11.0", python: null })).toBeNull();
  });
});
