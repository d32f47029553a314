import { describe, expect, it } from "vitest";
import { rateScopes } from "../../src/domain/rate-scopes";
import { canonicalPath } from "../../src/domain/request-path";

describe("rate-limit scopes", () => {
  it("API requests and /health meet the burst limit; only API requests the general one", () => {
    expect(rateScopes("GET", "/health")).toEqual(["burst"]);
    expect(rateScopes("GET", "/api/v1/me")).toEqual(["burst", "general"]);
  });

  it("the web app's static files (pages, settings, bundles) are not counted; /health and the API are", () => {
    expect(rateScopes("GET", "/app/assets/main-ABC123.js")).toEqual([]);
    expect(rateScopes("GET", "/attempts/att_1")).toEqual([]);
    expect(rateScopes("GET", "/app-config.json")).toEqual([]);
    expect(rateScopes("GET", "/")).toEqual([]);
    expect(rateScopes("GET", "/health")).toEqual(["burst"]);
    expect(rateScopes("GET", "/api")).toEqual(["burst"]);
    expect(rateScopes("GET", "/api/v1/docs")).toEqual(["burst", "general"]);
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

  it.each([
    "/api/v1/invites/accept/",
    "/api/v1/invites/accept//",
    "//api/v1//invites///accept",
    "/api/v1/invites/%61ccept",
    "/api/v1/%69nvites/accept/",
    "/%61pi/v1/invites/%61%63%63%65%70%74",
  ])("POST %s is the same path as POST /api/v1/invites/accept, and auth-related", (variant) => {
    expect(canonicalPath(variant)).toBe("/api/v1/invites/accept");
    expect(rateScopes("POST", canonicalPath(variant))).toEqual(["burst", "general", "auth"]);
  });

  it("variants of the other scoped paths are counted too", () => {
    expect(rateScopes("POST", canonicalPath("/api/v1/attempts/att_1/submit/"))).toEqual(["burst", "general", "upload"]);
    expect(rateScopes("POST", canonicalPath("/api/v1/attempts/%61tt_1//ide-session"))).toEqual(["burst", "general", "auth"]);
    expect(rateScopes("GET", canonicalPath("/api/v1/repohost/user-token/"))).toEqual(["burst", "general", "auth"]);
    expect(rateScopes("POST", canonicalPath("/api/v1/tasks/import%2Dpr"))).toEqual(["burst", "general", "upload"]);
  });

  it("canonical paths keep reserved escapes (a storage key's %2F) and the root", () => {
    expect(canonicalPath("/api/v1/storage/runner-jobs%2fjob_1%2Fjunit.xml/")).toBe("/api/v1/storage/runner-jobs%2Fjob_1%2Fjunit.xml");
    expect(rateScopes("GET", canonicalPath("/api/v1/storage/runner-jobs%2fjob_1%2Fjunit.xml/"))).toEqual([]);
    expect(canonicalPath("/api/v1/storage/a%2F%2Fb")).toBe("/api/v1/storage/a%2F%2Fb");
    expect(canonicalPath("/caf%c3%a9")).toBe("/caf%C3%A9");
    expect(canonicalPath("/")).toBe("/");
    expect(canonicalPath("//")).toBe("/");
    expect(canonicalPath("/health")).toBe("/health");
  });
});
