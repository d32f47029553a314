import { z } from "zod";
import {
  analyticsWindow,
  DEFAULT_WINDOW_DAYS,
  isWindowProblem,
  MAX_WINDOW_DAYS,
  PERCENTILES,
  type Percentile,
} from "../domain/analytics";
import { SUBSCORES, type SubscoreName } from "../domain/scoring";
import { organizationAnalytics } from "../flows/analytics.flow";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { OrgIdParam, TaskIdParam } from "./params";
import type { RouteTable } from "./table";

const count = () => z.number().int().min(0);

const DistributionSchema = z
  .object({
    count: count().describe("Values the distribution holds"),
    mean: z.number().nullable().describe("Arithmetic mean to one decimal; null when count is 0"),
    ...(Object.fromEntries(
      PERCENTILES.map((p) => [`p${p}`, z.number().nullable().describe(`${p}th percentile by nearest rank; null when count is 0`)]),
    ) as Record<`p${Percentile}`, z.ZodNullable<z.ZodNumber>>),
  })
  .meta({ id: "AnalyticsDistribution" });

const funnel = {
  invited: count().describe("Invitations created (one a re-invitation replaced counts once, as its replacement)"),
  accepted: count().describe("Of those, the ones accepted"),
  attempts: count().describe("Attempts created"),
  started: count().describe("Of those, the ones started"),
  submitted: count().describe("Of those, the ones submitted (by the candidate or at the deadline)"),
  scored: count().describe("Of those, the ones with a finished score report in force"),
};

const AnalyticsSchema = z
  .object({
    organization_id: z.string(),
    task_id: z.string().nullable().describe("The task the report is limited to, or null for all of the organization's"),
    window: z
      .object({ from: z.iso.date(), to: z.iso.date(), days: z.number().int().min(1).max(MAX_WINDOW_DAYS) })
      .describe("The UTC days covered, both included: the report counts invitations and attempts created on them"),
    funnel: z.object(funnel).describe("How far the window's invitations and attempts got"),
    scores: z
      .object({
        overall: DistributionSchema,
        subscores: z.object(Object.fromEntries(SUBSCORES.map((s) => [s, DistributionSchema])) as Record<SubscoreName, typeof DistributionSchema>),
      })
      .describe("Score distributions of the window's scored attempts (0–100), from each one's report in force"),
    time_to_submit_seconds: DistributionSchema.describe("Seconds from start to submission of the window's submitted attempts"),
    tasks: z
      .array(
        z.object({
          task_id: z.string(),
          title: z.string().describe("The organization's name for the task"),
          ...funnel,
          mean_overall_score: z.number().nullable(),
          median_overall_score: z.number().nullable().describe("By nearest rank: the lower middle value of an even count"),
        }),
      )
      .describe("Each task with an invitation or attempt in the window, most attempts first"),
    weeks: z
      .array(
        z.object({
          week_start: z.iso.date().describe("The Monday (UTC) of the ISO week"),
          ...funnel,
          mean_overall_score: z.number().nullable(),
        }),
      )
      .describe("Every ISO week overlapping the window, oldest first, counting what was created in it (the first and last may be partial weeks); the weeks add up to the funnel"),
  })
  .meta({ id: "OrganizationAnalytics" });

export class GetOrganizationAnalytics extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["analytics"],
    summary: "Organization-wide funnel, score distributions, time to submit, per-task breakdown and weekly trends",
    description:
      "Interviewer or higher in the organization. Counts the invitations and attempts created in the window, " +
      `\`from\` to \`to\` (UTC days, both included; by default the ${DEFAULT_WINDOW_DAYS} days ending today, at most ${MAX_WINDOW_DAYS}). ` +
      "Percentiles are by nearest rank (docs/api.md, \"Analytics\").",
    request: {
      params: OrgIdParam,
      query: z.object({
        from: z.iso.date().optional().describe(`First day (YYYY-MM-DD, UTC); by default ${DEFAULT_WINDOW_DAYS - 1} days before \`to\``),
        to: z.iso.date().optional().describe("Last day (YYYY-MM-DD, UTC), not before `from`; by default today"),
        task_id: TaskIdParam.shape.task_id.optional().describe("Only this task of the organization"),
      }),
    },
    responses: {
      "200": jsonResponse("The organization's analytics over the window", AnalyticsSchema),
      "404": jsonResponse("No such organization, or no such task in it", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const orgId = params.org_id;
    const window = analyticsWindow(query, new Date());
    if (isWindowProblem(window)) throw HttpError.invalid([{ loc: ["query", window.field], msg: window.message, type: "invalid_window" }]);
    await caller.requireMember(orgId, "interviewer");
    return unwrap(await organizationAnalytics(env, { organizationId: orgId, taskId: query.task_id ?? null, window }));
  }
}

export const analyticsRoutes: RouteTable = [["GET", "/analytics/org/:org_id", GetOrganizationAnalytics]];
