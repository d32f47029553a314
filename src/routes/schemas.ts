import { z } from "zod";
import { AI_PROVIDERS, CHAT_MESSAGE_STATUSES, CHAT_ROLES } from "../domain/ai-chat";
import { MAX_FLAGS, MAX_LINES_PER_FLAG, REVIEW_FLAG_KINDS } from "../domain/review-flags";
import { SUBSCORES } from "../domain/scoring";

// Response schemas that more than one resource's routes answer with: each route file imports
// them from here rather than from another route file.

const int = z.number().int();

/** A message of an attempt's AI chat: the ai-chat routes' own, and an event of the evaluation timeline. */
export const ChatMessageSchema = z
  .object({
    message_id: z.string(),
    attempt_id: z.string(),
    seq: int.describe("Its place in the conversation: a candidate's message 2n, its answer 2n + 1"),
    role: z.enum(CHAT_ROLES),
    content: z.string().describe("The candidate's message, or the assistant's answer (what came of it, when it failed)"),
    status: z.enum(CHAT_MESSAGE_STATUSES).describe("error: the provider failed before the answer was complete"),
    error: z.string().nullable().describe("Why the answer failed"),
    files: z
      .array(z.object({ path: z.string(), bytes: int }))
      .describe("The files the candidate shared with the message (their contents are not kept); [] for answers"),
    reply_to: z.string().nullable().describe("An answer: the message_id of the candidate's message"),
    provider: z.enum(AI_PROVIDERS).nullable().describe("An answer: the provider that wrote it; local is the stand-in of development and tests"),
    model: z.string().nullable(),
    usage: z
      .object({
        prompt_tokens: int,
        completion_tokens: int,
        estimated: z.boolean().describe("True when the provider reported no usage and these are the service's estimate (about 4 characters a token)"),
      })
      .nullable()
      .describe("An answer: tokens of the prompt and of the answer"),
    timing: z
      .object({
        first_token_at: z.string().nullable(),
        ended_at: z.string(),
        first_token_ms: int.nullable().describe("From created_at (the provider was asked) to the first text"),
        total_ms: int,
      })
      .nullable()
      .describe("An answer: how long it took"),
    created_at: z.string().describe("A candidate's message: when it was sent; an answer: when the provider was asked"),
  })
  .meta({ id: "AiChatMessage" });

const Subscores = z.object(Object.fromEntries(SUBSCORES.map((n) => [n, z.number().min(0).max(100)])) as Record<(typeof SUBSCORES)[number], z.ZodNumber>);
const Evidence = z.record(z.string(), z.unknown());
const TestCounts = z.object({ passed: z.number().int(), total: z.number().int() });

/**
 * What both views of a report have: the scores, their weights, the client's figures beside the
 * measured ones, and the candidate's explanation (their own words, so their view keeps it).
 */
const reportCommon = {
  score_id: z.string(),
  attempt_id: z.string(),
  task_id: z.string(),
  rubric_version: z.string().describe("The rubric the report was computed with (docs/scoring.md)"),
  overall_score: z.number().min(0).max(100).describe("Weighted mean of the subscores"),
  subscores: Subscores.describe("Each 0–100"),
  weights: Subscores.describe("Weight of each subscore in overall_score"),
  claims: z
    .array(
      z.object({
        figure: z.string(),
        claimed: z.number().nullable(),
        measured: z.number().nullable(),
        gap: z.number().nullable(),
        flagged: z.boolean(),
      }),
    )
    .describe("The client's figures beside the measured ones; a gap over 0.25 is flagged"),
  explanation: z
    .string()
    .nullable()
    .describe("The candidate's account of the work as the submit payload had it, which communication is scored from; null when they wrote none"),
  created_at: z.string(),
  completed_at: z.string(),
};

/** Changed source lines a reviewer should read (docs/scoring.md, "Threat model"): staff only, never a deduction. */
export const ReviewFlagSchema = z
  .object({
    kind: z
      .enum(REVIEW_FLAG_KINDS)
      .describe(
        "framework_internals: reaches into the test framework or the runner; patches_builtins: replaces built-in modules or functions; " +
          "reads_test_files: reads the tests or watches them run; writes_outside_workspace: writes outside the workspace, or reaches into /proc; " +
          "ends_process: ends the process or hooks its exit",
      ),
    reason: z.string().describe("Why a reviewer should read these lines"),
    file: z.string().describe("The changed source file (test files are never flagged)"),
    lines: z
      .array(
        z.object({
          line: int.min(1).describe("1-based, in the submitted file"),
          text: z.string().describe("The line, trimmed, cut at 200 characters"),
        }),
      )
      .describe(`The changed lines that matched, at most ${MAX_LINES_PER_FLAG}`),
    more_lines: int.min(0).describe("Matching lines beyond those listed"),
  })
  .meta({ id: "ReviewFlag" });

export const ScoreReportSchema = z
  .object({
    view: z.literal("staff").describe("The staff's view: everything the report holds"),
    ...reportCommon,
    evidence: z
      .record(z.string(), Evidence)
      .describe("What each subscore was computed from, the hidden tests that failed (by id) included"),
    flags: z.array(z.string()).describe("Points for the reviewer"),
    review_flags: z
      .array(ReviewFlagSchema)
      .optional()
      .describe(
        `Changed source lines for the reviewer to read, each with its kind, reason, file and lines (at most ${MAX_FLAGS}): ` +
          "evidence, not a deduction; no score depends on them. Staff only (reports made since review flags carry their lines)",
      ),
    ignored_test_edits: z.array(z.string()).describe("The task's test files the candidate changed; those changes were not scored"),
    excluded_from_hidden_run: z
      .array(z.string())
      .optional()
      .describe("Overlay paths the hidden-test run left at the task's version (reports made since hidden tests are matched by file)"),
  })
  .meta({ id: "ScoreReport" });

export const CandidateScoreReportSchema = z
  .object({
    view: z.literal("candidate").describe("The candidate's view (docs/scoring.md, \"What candidates see\")"),
    ...reportCommon,
    evidence: z
      .object({
        correctness: z
          .object({
            run_status: z.string().nullable().describe("How the hidden-test run ended"),
            fail_to_pass: TestCounts.nullable().describe("Hidden tests the task's change makes pass: how many of them pass"),
            pass_to_pass: TestCounts.nullable().describe("Hidden tests that passed before the change: how many still pass"),
            tampered: z.boolean().optional().describe("Present when the run was checked: whether it was found tampered with"),
          })
          .describe("Counts only: never which hidden tests failed, their files or the reasons that name them"),
        test_coverage: Evidence,
        code_quality: Evidence,
        behavior: Evidence,
        communication: Evidence,
      })
      .describe("The evidence about the candidate's own work; the hidden tests only as counts"),
  })
  .meta({ id: "CandidateScoreReport" });

export const ScoringStateSchema = z
  .object({
    status: z.enum(["not_submitted", "scoring", "scored", "failed"]),
    reason: z
      .string()
      .nullable()
      .describe(
        "Why scoring failed, or the last runner trouble while it retries. Staff get the runner's words; the candidate a " +
          "general sentence, since those words may name the hidden test files",
      ),
    score_id: z.string().nullable(),
  })
  .meta({ id: "ScoringState" });
