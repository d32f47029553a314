import { describe, expect, it } from "vitest";
import { hasRole, isStaffIn, roleIn, staffOrganizations, type Viewer } from "../../src/domain/roles";

describe("role order", () => {
  it("candidate < interviewer < orgadmin < admin", () => {
    expect(hasRole("interviewer", "candidate")).toBe(true);
    expect(hasRole("interviewer", "interviewer")).toBe(true);
    expect(hasRole("interviewer", "orgadmin")).toBe(false);
    expect(hasRole("admin", "orgadmin")).toBe(true);
    expect(hasRole("candidate", "interviewer")).toBe(false);
  });
});

describe("a caller's role in an organization", () => {
  const interviewerOfA: Viewer = { userId: "usr_1", role: "interviewer", orgId: "a" };

  it("is the token's role in the organization the token names, whatever is stored", () => {
    expect(roleIn(interviewerOfA, "a", null)).toBe("interviewer");
    expect(roleIn(interviewerOfA, "a", "token")).toBe("interviewer");
    expect(roleIn(interviewerOfA, "a", "invitation")).toBe("interviewer");
    expect(roleIn({ role: "candidate", orgId: "a" }, "a", null)).toBe("candidate");
  });

  it("elsewhere, a membership recorded from an earlier token grants nothing; an accepted invitation a candidate's rights", () => {
    expect(roleIn(interviewerOfA, "b", null)).toBeNull();
    expect(roleIn(interviewerOfA, "b", "token")).toBeNull();
    expect(roleIn(interviewerOfA, "b", "invitation")).toBe("candidate");
    expect(roleIn({ role: "orgadmin", orgId: undefined }, "b", "token")).toBeNull();
  });

  it("a platform admin is admin everywhere", () => {
    expect(roleIn({ role: "admin", orgId: "a" }, "b", null)).toBe("admin");
    expect(roleIn({ role: "admin", orgId: undefined }, "b", null)).toBe("admin");
  });

  it("staff (interviewer and above) only where the token says so; lists scope to that organization", () => {
    expect(isStaffIn(interviewerOfA, "a")).toBe(true);
    expect(isStaffIn(interviewerOfA, "b")).toBe(false);
    expect(isStaffIn({ role: "candidate", orgId: "a" }, "a")).toBe(false);
    expect(staffOrganizations(interviewerOfA)).toEqual(["a"]);
    expect(staffOrganizations({ role: "orgadmin", orgId: "a" })).toEqual(["a"]);
    expect(staffOrganizations({ role: "candidate", orgId: "a" })).toEqual([]);
    expect(staffOrganizations({ role: "interviewer", orgId: undefined })).toEqual([]);
    expect(staffOrganizations({ role: "admin", orgId: undefined })).toBe("all");
  });
});
