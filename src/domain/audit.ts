/** The audit log's vocabulary: staff actions recorded for the organization (docs/api.md, "Audit events"). */

export const AUDIT_ACTIONS = ["retake.granted"] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_TARGET_TYPES = ["task"] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];
