// Who is signed in (GET /me): loaded at boot and kept in a signal every page reads; loadMe()
// reads it through the view's cache (lib/data.ts), so callers in one view share one request.
import { signal } from "@preact/signals";
import type { components } from "../../../client/src/index";
import { isStaffRole } from "../../../protocol/assessment-rules";
import { read } from "./data";

export type Me = components["schemas"]["Me"];

export const me = signal<Me | null>(null);

export async function loadMe(): Promise<Me> {
  const found = await read("/api/v1/me");
  me.value = found;
  return found;
}

/** Whether the session may use the interviewer console: staff somewhere, or by its token's role. */
export function isStaff(user: Me | null): boolean {
  if (!user) return false;
  return isStaffRole(user.role) || user.memberships.some((m) => isStaffRole(m.effective_role));
}

/** The organization the console works in: the first where the session is staff. */
export function staffOrganization(user: Me | null): string | undefined {
  return user?.memberships.find((m) => isStaffRole(m.effective_role))?.organization_id;
}
