import { describe, expect, it } from "vitest";
import { notFoundText, retryable } from "../../../web/src/lib/errors";

describe("what a failed load offers", () => {
  it("offers trying again only when another try may succeed", () => {
    for (const status of [undefined, 0, 408, 409, 429, 500, 503]) expect(retryable(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 410, 422]) expect(retryable(status)).toBe(false);
  });

  it("says what was not found, not only that something was not", () => {
    expect(notFoundText("This task")).toBe("This task was not found: it may have been deleted, or the link may be wrong.");
  });
});
