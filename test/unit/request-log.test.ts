import { describe, expect, it } from "vitest";
import { SLOW_REQUEST_MS, writesRequestLine } from "../../src/domain/request-log";

describe("request log lines", () => {
  it("leaves successful quick reads to the platform's invocation log", () => {
    for (const method of ["GET", "HEAD", "OPTIONS"]) {
      expect(writesRequestLine(method, 200, 3)).toBe(false);
      expect(writesRequestLine(method, 304, 3)).toBe(false);
    }
  });

  it("writes one for every request that may change something, whatever its outcome", () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) expect(writesRequestLine(method, 200, 3)).toBe(true);
  });

  it("writes one for every refused or failed request", () => {
    for (const status of [400, 401, 403, 404, 422, 429, 500, 503]) expect(writesRequestLine("GET", status, 3)).toBe(true);
  });

  it("writes one for a slow read", () => {
    expect(writesRequestLine("GET", 200, SLOW_REQUEST_MS - 1)).toBe(false);
    expect(writesRequestLine("GET", 200, SLOW_REQUEST_MS)).toBe(true);
  });
});
