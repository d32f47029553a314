import { z } from "zod";
import { removeRepohostToken, repohostTokens, storeRepohostToken, type RepohostTokenRow } from "../flows/repohost.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { OrgIdParam } from "./params";
import type { RouteTable } from "./table";

const Host = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(255)
  .describe("The repo host as pull request URLs name it: github.com, or a configured GitHub Enterprise host[:port]");

const StoredTokenSchema = z
  .object({ organization_id: z.string(), host: z.string(), last4: z.string(), created_at: z.string() })
  .meta({ id: "StoredRepoHostToken" });

function storedView(row: RepohostTokenRow): z.infer<typeof StoredTokenSchema> {
  return { organization_id: row.organizationId, host: row.host, last4: row.last4, created_at: row.createdAt };
}

const ABOUT =
  "Repo host tokens let the organization import pull requests of private repositories. One token per " +
  "organization and host, encrypted at rest, never returned or logged. Interviewers and above of the organization.";

export class StoreRepoHostToken extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["repohost"],
    summary: "Store the organization's token for a repo host (replaces the one stored)",
    description: ABOUT,
    request: {
      body: jsonContent(
        z.strictObject({
          organization_id: OrgIdParam.shape.org_id,
          host: Host,
          token: z.string().min(8).max(1000).regex(/^\S+$/, "a token has no whitespace"),
        }),
      ),
    },
    responses: { "201": jsonResponse("Stored; only the last four characters are shown", StoredTokenSchema) },
  };

  async run({ env, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(body.organization_id, "interviewer");
    const row = unwrap(
      await storeRepohostToken(env, { organizationId: body.organization_id, host: body.host, token: body.token, createdBy: caller.user.id }),
    );
    return json(storedView(row), 201);
  }
}

const OrgQuery = z.object({ organization_id: OrgIdParam.shape.org_id });

export class ListRepoHostTokens extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["repohost"],
    summary: "The organization's stored repo host tokens (host, last four characters, created time)",
    description: ABOUT,
    request: { query: OrgQuery },
    responses: { "200": jsonResponse("Stored tokens", z.object({ items: z.array(StoredTokenSchema) })) },
  };

  async run({ env, caller }: SessionContext) {
    const { query } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(query.organization_id, "interviewer");
    return { items: (await repohostTokens(env, query.organization_id)).map(storedView) };
  }
}

export class DeleteRepoHostToken extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["repohost"],
    summary: "Remove the organization's token for a repo host",
    description: ABOUT,
    request: { query: OrgQuery.extend({ host: Host }) },
    responses: { "204": { description: "Removed" }, "404": jsonResponse("No token stored for that host", ErrorSchema) },
  };

  async run({ env, caller }: SessionContext) {
    const { query } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(query.organization_id, "interviewer");
    unwrap(await removeRepohostToken(env, query.organization_id, query.host));
    return new Response(null, { status: 204 });
  }
}

export const repohostRoutes: RouteTable = [
  ["POST", "/repohost/user-token", StoreRepoHostToken],
  ["GET", "/repohost/user-token", ListRepoHostTokens],
  ["DELETE", "/repohost/user-token", DeleteRepoHostToken],
];
