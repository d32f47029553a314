import { describe, expect, it } from "vitest";
import { rateScopes } from "../../src/domain/rate-scopes";

describe("rate-limit scopes", () => {
  it("every request meets the burst limit; only API requests the general one", () => {
    expect(rateScopes("GET", "/health")).toEqual(["burst"]);
    expect(rateScopes("GET", "/api/v1/me")).toEqual(["burst", "general"]);
  });

  it.each([
    ["POST", "/api/v1/attempts/att_1/ide-session"],
    ["DELETE", "/api/v1/attempts/att_1/ide-session/assay_ide_x"],
    ["POST", "/api/v1/invites/accept"],
    ["POST", "/api/v1/repohost/user-token"],
  ])("%s %s is auth-related", (method, path) => {
    expect(rateScopes(method, path)).toEqual(["burst", "general", "auth"]);
  });

  it.each([
    ["POST", "/api/v1/tasks/import-pr"],
    ["POST", "/api/v1/attempts/att_1/submit"],
  ])("%s %s is an upload", (method, path) => {
    expect(rateScopes(method, path)).toEqual(["burst", "general", "upload"]);
  });

  it("the IDE's save (PATCH changes), queuing runs and polling them are not uploads", () => {
    expect(rateScopes("PATCH", "/api/v1/attempts/att_1/changes")).toEqual(["burst", "general"]);
    expect(rateScopes("GET", "/api/v1/attempts/att_1/runs/run_1")).toEqual(["burst", "general"]);
    expect(rateScopes("POST", "/api/v1/attempts/att_1/runs")).toEqual(["burst", "general"]);
  });

  it("signed machine routes (presigned storage URLs, the runner's callback) are not counted", () => {
    expect(rateScopes("GET", "/api/v1/storage/runner-jobs%2Fjob_1%2Fjunit.xml")).toEqual([]);
    expect(rateScopes("PUT", "/api/v1/storage/runner-jobs%2Fjob_1%2Flog.txt")).toEqual([]);
    expect(rateScopes("POST", "/api/v1/internal/runner/callback")).toEqual([]);
    expect(rateScopes("GET", "/api/v1/storage/a/b")).toEqual(["burst", "general"]);
  });
});
