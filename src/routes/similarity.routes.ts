import { z } from "zod";
import { SIMILARITY_LIMITS, SIMILARITY_PARAMS } from "../domain/similarity";
import { similarityView } from "../flows/similarity.flow";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { evaluatedAttempt } from "./evaluation.routes";
import { AttemptIdParam, attemptNotFound } from "./params";
import type { RouteTable } from "./table";

const RegionSideSchema = z.object({
  path: z.string(),
  start_line: z.number().int().describe("1-based, inclusive"),
  end_line: z.number().int(),
  text: z.string().describe(`The region's lines, at most ${SIMILARITY_LIMITS.regionLines} and ${SIMILARITY_LIMITS.regionChars} characters`),
  truncated: z.boolean().describe("`text` is cut; the line range is the whole region's"),
});

const RegionSchema = z
  .object({
    left: RegionSideSchema.describe("In this attempt's submission"),
    right: RegionSideSchema.describe("In the upstream solution, or in the peer's submission"),
    tokens: z.number().int().describe("Normalized tokens the region spans"),
  })
  .meta({ id: "SimilarityRegion" });

const similarity = z.number().min(0).max(1).describe("Shared fingerprints over both sides' (Sørensen–Dice), 0 to 1");
const regions = z.array(RegionSchema).describe(`The longest matching regions, at most ${SIMILARITY_LIMITS.regionsPerPair}`);

const SimilaritySchema = z
  .object({
    attempt_id: z.string(),
    status: z.enum(["pending", "ready"]).describe("pending: submitted, not compared yet (the queue does it within seconds); ready: compared"),
    computed_at: z.string().nullable(),
    parameters: z.object({ k: z.number().int().describe("Tokens per k-gram"), window: z.number().int().describe("k-grams per winnowing window") }),
    upstream: z
      .object({ similarity, regions })
      .nullable()
      .describe("Against the task's upstream solution (its solution patch applied to its snapshot); null while pending or when there is none"),
    upstream_missing: z.string().nullable().describe("Why a ready comparison has no upstream side"),
    peers: z
      .array(
        z.object({
          attempt_id: z.string(),
          candidate: z.object({ id: z.string(), email: z.string().nullable() }).describe("As GET .../evaluation/review names the candidate"),
          similarity,
          regions,
        }),
      )
      .describe(`Other submitted attempts of the task in the organization, most similar first (at most ${SIMILARITY_LIMITS.peers} compared per attempt)`),
  })
  .meta({ id: "AttemptSimilarity" });

export class GetSimilarity extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["evaluation"],
    summary: "The submission's similarity to the upstream solution and to the task's other submissions",
    description:
      "Interviewers and above in the attempt's organization (403 for its own candidate, as the evaluation). Evidence for " +
      "the reviewer, never a deduction: no score reads it. Winnowed fingerprints (k = " +
      `${SIMILARITY_PARAMS.k}, window ${SIMILARITY_PARAMS.window}) of the changed source files, names and literals ` +
      "normalized, comments and whitespace left out, and so is the task's own code; compared within the organization only " +
      "(docs/scoring.md, \"Similarity\"). 409 before the attempt is submitted.",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse("The attempt's similarity", SimilaritySchema),
      "403": jsonResponse("The attempt's own candidate, or not interviewer or higher in its organization", ErrorSchema),
      "404": attemptNotFound,
      "409": jsonResponse("The attempt is not submitted yet", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const attempt = await evaluatedAttempt(db, caller, params.attempt_id);
    return unwrap(await similarityView(env, attempt));
  }
}

export const similarityRoutes: RouteTable = [["GET", "/attempts/:attempt_id/evaluation/similarity", GetSimilarity]];
