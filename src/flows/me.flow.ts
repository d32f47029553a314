import { membershipsOf as storedMemberships, type MembershipView } from "../db/accounts.queries";
import { database } from "../db/client";
import type { Env } from "../env";

/** The organizations a user belongs to, with their role and plan in each, ordered by organization id. */
export function membershipsOf(env: Env, userId: string): Promise<MembershipView[]> {
  return storedMemberships(database(env.DB), userId);
}
