import { describe, expect, it } from "vitest";
import { hasRole } from "../../src/domain/roles";

describe("role order", () => {
  it("candidate < interviewer < orgadmin < admin", () => {
    expect(hasRole("interviewer", "candidate")).toBe(true);
    expect(hasRole("interviewer", "interviewer")).toBe(true);
    expect(hasRole("interviewer", "orgadmin")).toBe(false);
    expect(hasRole("admin", "orgadmin")).toBe(true);
    expect(hasRole("candidate", "interviewer")).toBe(false);
  });
});
