/** The roles carried in session tokens, lowest first. */
export const ROLES = ["candidate", "interviewer", "orgadmin", "admin"] as const;
export type Role = (typeof ROLES)[number];

export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

export function hasRole(actual: Role, required: Role): boolean {
  return roleRank(actual) >= roleRank(required);
}
