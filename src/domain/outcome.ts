/** One problem with a request field, in the shape of the spec's 422 entries. */
export interface FieldIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/**
 * Why an operation is refused, in the domain's words: the caller is not who may do it
 * (`unauthenticated`) or may not do it (`forbidden`), the thing is not there or not theirs to
 * see (`not_found`), it is there no longer (`gone`), the state does not allow it (`conflict`),
 * it would go past a size limit (`too_large`), its input is wrong field by field (`invalid`),
 * or it comes too often (`rate_limited`). http/unwrap.ts is the one place that says each in HTTP.
 */
export type RefusalKind = "unauthenticated" | "forbidden" | "not_found" | "gone" | "conflict" | "too_large";
export type Refusal =
  | { kind: RefusalKind; detail: string }
  | { kind: "invalid"; detail: FieldIssue[] }
  | { kind: "rate_limited"; detail: string; retryAfterSeconds: number };
export type Outcome<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

export const accept = <T>(value: T): Outcome<T> => ({ ok: true, value });
export const refuse = (kind: RefusalKind, detail: string): Outcome<never> => ({ ok: false, refusal: { kind, detail } });
export const invalid = (issues: FieldIssue[]): Outcome<never> => ({ ok: false, refusal: { kind: "invalid", detail: issues } });
