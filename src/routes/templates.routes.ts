import { z } from "zod";
import { DEFAULT_AI_ASSISTANCE, TASK_VISIBILITIES } from "../domain/tasks";
import { TEMPLATE_COPY_LIMIT } from "../domain/templates";
import { catalogueTemplate, copyTemplate, templateListing, type CatalogueTemplate } from "../flows/templates.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { OrgIdParam } from "./params";
import { AiAssistance, StatementSchema, Tag, Tags, TaskSchema, taskView } from "./task-fields";
import type { RouteTable } from "./table";

const TemplateId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9-]+$/, "a template id is lower-case letters, digits and '-'")
  .describe("The template's slug, e.g. csv-quoted-fields-js");

const TemplateSchema = z
  .object({
    template_id: TemplateId,
    title: z.string().describe("The catalogue's name for the template; the staff title of a task copied from it"),
    statement: StatementSchema,
    language: z.string(),
    test_framework: z.string().describe("node-test, jest, vitest, mocha, ava, tape, uvu or pytest"),
    tags: z.array(z.string()),
    time_limit_minutes: z.number().int(),
    hidden_tests: z
      .object({ fail_to_pass: z.number().int(), pass_to_pass: z.number().int() })
      .describe(
        "How many hidden tests a correct solution makes pass, and how many must keep passing. Their names, " +
          "the tests themselves and the solution are never public",
      ),
  })
  .meta({ id: "Template" });

/** What any signed-in user may read of a template: never the solution, the hidden tests or their names. */
function templateView(t: CatalogueTemplate): z.infer<typeof TemplateSchema> {
  return {
    template_id: t.slug,
    title: t.title,
    statement: t.statement,
    language: t.language,
    test_framework: t.test_framework,
    tags: t.tags,
    time_limit_minutes: t.time_limit_minutes,
    hidden_tests: { fail_to_pass: t.fail_to_pass.length, pass_to_pass: t.pass_to_pass.length },
  };
}

export class ListTemplates extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["templates"],
    summary: "The catalogue of public templates",
    description:
      "Ready tasks shipped with the service, each a small repository with a change to make and hidden tests that " +
      "validate it; copy one into an organization with POST /public/tasks. Any signed-in user. Ordered by id.",
    request: {
      query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
        language: z
          .string()
          .trim()
          .toLowerCase()
          .min(1)
          .max(50)
          .optional()
          .describe("Only templates in this language (javascript, python; any letter case)"),
        tag: Tag.optional().describe("Only templates with this tag"),
      }),
    },
    responses: { "200": jsonResponse("A page of templates", pageEnvelope(TemplateSchema)) },
  };

  async run() {
    const { query } = await this.getValidatedData<typeof this.schema>();
    const templates = templateListing({ language: query.language, tag: query.tag });
    return paginate(query, templates.count, async (limit, offset) => (await templates.page(limit, offset)).map(templateView));
  }
}

export class GetTemplate extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["templates"],
    summary: "One public template",
    description: "Any signed-in user.",
    request: { params: z.object({ template_id: TemplateId }) },
    responses: { "200": jsonResponse("The template", TemplateSchema), "404": jsonResponse("No such template", ErrorSchema) },
  };

  async run() {
    const { params } = await this.getValidatedData<typeof this.schema>();
    return templateView(unwrap(catalogueTemplate(params.template_id)));
  }
}

export class CopyTemplate extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["templates"],
    summary: "Make a task from a public template",
    description:
      "Interviewer or higher in the organization. Copies the template into the organization as a task with the " +
      "template's statement, tags and time limit, and returns at once with it in status IMPORTING; it then becomes " +
      "READY (or FAILED) through the same preparation and validation as a task imported from a pull request: poll " +
      "GET /tasks/{task_id} with backoff. Copying a template again makes another task. At most " +
      `${TEMPLATE_COPY_LIMIT.copies} copies per user in any ${TEMPLATE_COPY_LIMIT.windowSeconds} seconds ` +
      "(the spec's public challenge limit), counted per user whatever the IP; over it, 429 with Retry-After.",
    request: {
      body: jsonContent(
        z.strictObject({
          template_id: TemplateId,
          organization_id: OrgIdParam.shape.org_id,
          visibility: z.enum(TASK_VISIBILITIES).default("PRIVATE_ORG"),
          tags: Tags.optional().describe("Up to 20 tags of 1–50 characters; the template's tags when not given"),
          ai_assistance: AiAssistance.default(DEFAULT_AI_ASSISTANCE),
        }),
      ),
    },
    responses: {
      "202": jsonResponse("Copy started", TaskSchema),
      "404": jsonResponse("No such template", ErrorSchema),
      "429": jsonResponse(
        `Rate limited: ${TEMPLATE_COPY_LIMIT.copies} copies per user per minute; retry after the Retry-After seconds`,
        ErrorSchema,
      ),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(body.organization_id, "interviewer");
    const task = unwrap(
      await copyTemplate(env, {
        templateId: body.template_id,
        organizationId: body.organization_id,
        visibility: body.visibility,
        tags: body.tags,
        aiAssistance: body.ai_assistance,
        createdBy: caller.user.id,
      }),
    );
    return json(taskView(task, "staff"), 202, { Location: `/api/v1/tasks/${task.id}` });
  }
}

export const templateRoutes: RouteTable = [
  ["GET", "/public/templates", ListTemplates],
  ["GET", "/public/templates/:template_id", GetTemplate],
  ["POST", "/public/tasks", CopyTemplate],
];
