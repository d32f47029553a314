// Who is signed in (GET /me), loaded once per session and shared by every page.
import { signal } from "@preact/signals";
import type { components } from "../../../client/src/index";
import { api, call } from "../api";

export type Me = components["schemas"]["Me"];

export const me = signal<Me | null>(null);

export async function loadMe(): Promise<Me> {
  const found = await call(api.GET("/api/v1/me"));
  me.value = found;
  return found;
}

const STAFF = new Set(["interviewer", "orgadmin", "admin"]);

/** Whether the session may use the interviewer console: staff somewhere, or by its token's role. */
export function isStaff(user: Me | null): boolean {
  if (!user) return false;
  return STAFF.has(user.role) || user.memberships.some((m) => m.effective_role !== null && STAFF.has(m.effective_role));
}

/** The organization the console works in: the first where the session is staff. */
export function staffOrganization(user: Me | null): string | undefined {
  return user?.memberships.find((m) => m.effective_role !== null && STAFF.has(m.effective_role))?.organization_id;
}
