import { analyticsRows } from "../db/analytics.queries";
import { database } from "../db/client";
import { analyticsReport, type AnalyticsReport, type AnalyticsWindow } from "../domain/analytics";
import { accept, refuse, type Outcome } from "../domain/outcome";
import type { Env } from "../env";

/**
 * An organization's analytics over a window (docs/api.md, "Analytics"), for all its tasks or
 * one of them; not found when there is no such organization, or no such task in it.
 */
export async function organizationAnalytics(
  env: Env,
  scope: { organizationId: string; taskId: string | null; window: AnalyticsWindow },
): Promise<Outcome<AnalyticsReport>> {
  const found = await analyticsRows(database(env.DB), scope);
  if ("missing" in found) {
    const { organizationId, taskId } = scope;
    return refuse("not_found", found.missing === "organization" ? `Organization ${organizationId} not found` : `Organization ${organizationId} has no task ${taskId}`);
  }
  return accept(analyticsReport(scope, found.rows));
}
