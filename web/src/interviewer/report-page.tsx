// An attempt's score report for its reviewers (docs/scoring.md), in two requests at most: GET
// .../evaluation/review (the attempt, its task's title, the candidate's address, the report in force with
// its evidence: the hidden tests that failed, coverage, lint findings, ..., and the review flags with
// their lines) and, once submitted, GET .../evaluation/review/diff (the submission's changes against the
// task's version, file by file, drawn by ./diff-view, loaded only here). Before scoring has finished the
// review says why there is no report; the page shows that and waits for score_report.ready (polling
// while it scores). Once submitted, the similarity evidence (./similarity-section) is read when its
// section is opened.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { components } from "../../../client/src/index";
import { api, call, useLoad } from "../lib/data";
import { ErrorBox, LoadError, Loading } from "../components/states";
import { describe } from "../lib/errors";
import type { PageProps } from "../lib/page";
import { SUBSCORES, type SubscoreKey } from "./analytics";
import { Chart } from "./charts";
import type { DiffHandle, DiffLayout } from "./diff-view";
import { contentNote, diffSummary, diffTexts, fileStatusText, KEPT_AT_TASK_VERSION, type DiffFile } from "./diff-words";
import { shapeOf } from "./evidence";
import { formatDateTime, humanize } from "./format";
import { StatusBadge, TestIds } from "./parts";
import { lineSummary, numberedLines, reviewFlagGroups, type ReviewFlag } from "./review-flags";
import { SimilaritySection } from "./similarity-section";
import { useWatched, type WatchMode } from "./use-watched";
import { LiveNotesSection } from "../live/live-notes";

type Review = components["schemas"]["AttemptReview"];
type Attempt = Review["attempt"];
type Evidence = components["schemas"]["ScoreEvidence"];

function loadReview(attemptId: string): Promise<Review> {
  return call(api.GET("/api/v1/attempts/{attempt_id}/evaluation/review", { params: { path: { attempt_id: attemptId } } }));
}

/** Scoring under way: poll. Not submitted, or failed (an orgadmin may re-score): only a notification says when that changes. */
function watchMode(v: Review): WatchMode {
  if (v.report) return "done";
  return v.attempt.scoring?.status === "scoring" ? "poll" : "listen";
}

const ABOUT_SCORING = new Set(["score_report.ready", "attempt.submitted", "attempt.auto_submitted"]);

/** The candidate as the API knows them: their e-mail address, else their user id. */
const candidateName = (review: Review) => review.candidate.email ?? review.candidate.id;

export function ReportPage({ params }: PageProps) {
  const attemptId = params.attemptId ?? "";
  const loaded = useWatched(() => loadReview(attemptId), [attemptId], watchMode, (n) => ABOUT_SCORING.has(n.type) && n.payload.attempt_id === attemptId);

  if (loaded.error || !loaded.data) {
    return (
      <>
        <h1>Score report</h1>
        {loaded.error ? (
          <LoadError error={loaded.error} status={loaded.status} what="This attempt" back={{ href: "/console/tasks", label: "Back to the tasks" }} onRetry={loaded.reload} />
        ) : (
          <Loading what="Loading the score report" />
        )}
      </>
    );
  }
  const review = loaded.data;
  const { attempt, report, report_missing: missing } = review;
  return (
    <>
      <p class="crumbs">
        <a href={`/console/tasks/${encodeURIComponent(review.task.task_id)}`}>{review.task.title}</a>
        {attempt.started_at && <a href={`/console/attempts/${encodeURIComponent(attempt.id)}/replay`}>Replay of the attempt</a>}
      </p>
      <h1>Score report</h1>
      <p class="lead">
        <strong>{candidateName(review)}</strong> on <strong>{review.task.title}</strong>
      </p>
      <AttemptFacts review={review} />
      {loaded.staleError && <p class="muted">Could not check again: {loaded.staleError} Trying again shortly.</p>}
      {report ? (
        <>
          <Scores report={report} />
          <Explanation text={report.explanation} autoSubmitted={attempt.auto_submitted} />
          <EvidenceSections evidence={report} />
        </>
      ) : (
        <section class="box" aria-labelledby="pending-heading">
          <h2 id="pending-heading">Not scored yet</h2>
          <p role="status">{missing}</p>
          <p class="muted">
            {attempt.scoring?.status === "scoring"
              ? "Scoring runs the hidden tests in the sandbox; this page shows the report as soon as it is ready."
              : "This page shows the report as soon as one is ready."}
          </p>
        </section>
      )}
      {attempt.submitted_at && <SubmissionDiff attemptId={attempt.id} scoreId={report?.score_id ?? null} />}
      {attempt.submitted_at && <SimilaritySection attemptId={attempt.id} />}
      {attempt.started_at && <LiveNotesSection attemptId={attempt.id} />}
    </>
  );
}

/**
 * The submission's changes against the task's version, file by file, unified or side by side.
 * Loaded again when a report comes into force, as the report says which files the run kept.
 */
function SubmissionDiff({ attemptId, scoreId }: { attemptId: string; scoreId: string | null }) {
  const diff = useLoad(
    () => call(api.GET("/api/v1/attempts/{attempt_id}/evaluation/review/diff", { params: { path: { attempt_id: attemptId } } })),
    [attemptId, scoreId],
  );
  const [layout, setLayout] = useState<DiffLayout>("unified");
  return (
    <section aria-labelledby="diff-heading">
      <h2 id="diff-heading">The submission's changes</h2>
      {diff.error ? (
        <ErrorBox message={`The changes could not be loaded: ${diff.error}`} onRetry={diff.reload} />
      ) : !diff.data ? (
        <Loading what="Loading the changes" />
      ) : (
        <>
          <p>{diffSummary(diff.data.files)}</p>
          {diff.data.kept_from === "rules" && diff.data.files.some((f) => f.kept_at_task_version) && (
            <p class="muted">Until the report is in, the files marked are those the scoring rules keep; the sandbox runner may keep more harness files.</p>
          )}
          {diff.data.files.length > 0 && (
            <fieldset class="row diff-layout">
              <legend>Show the changes</legend>
              {(
                [
                  ["unified", "Unified"],
                  ["split", "Side by side"],
                ] as const
              ).map(([value, label]) => (
                <label key={value}>
                  <input type="radio" name="diff-layout" value={value} checked={layout === value} onChange={() => setLayout(value)} /> {label}
                </label>
              ))}
            </fieldset>
          )}
          {diff.data.files.map((file, i) => (
            <DiffFileSection key={file.path} file={file} layout={layout} initiallyOpen={i < OPEN_FILES} />
          ))}
        </>
      )}
    </section>
  );
}

// The first files are drawn at once; the rest when opened, so a large submission loads quickly.
const OPEN_FILES = 10;

function DiffFileSection({ file, layout, initiallyOpen }: { file: DiffFile; layout: DiffLayout; initiallyOpen: boolean }) {
  const [open, setOpen] = useState(initiallyOpen);
  const note = contentNote(file);
  return (
    <details class={`diff-file${file.kept_at_task_version ? " kept" : ""}`} open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        <code>{file.path}</code> <span class="muted">{fileStatusText(file)}</span>
        {file.kept_at_task_version && <strong class="bad"> · kept at the task's version</strong>}
      </summary>
      {file.kept_at_task_version && <p class="bad">{KEPT_AT_TASK_VERSION}</p>}
      {note ? <p class="muted">{note}</p> : open && <DiffCanvas file={file} layout={layout} />}
    </details>
  );
}

/** One file's diff, drawn by ./diff-view (CodeMirror's merge view), which is downloaded at the first diff shown. */
function DiffCanvas({ file, layout }: { file: DiffFile; layout: DiffLayout }) {
  const ref = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string>();
  useEffect(() => {
    let alive = true;
    let handle: DiffHandle | undefined;
    const { base, submitted } = diffTexts(file);
    import("./diff-view").then(
      ({ mountDiff }) => {
        if (alive && ref.current) handle = mountDiff(ref.current, base, submitted, layout, file.path);
      },
      (e: unknown) => alive && setError(describe(e)),
    );
    return () => {
      alive = false;
      handle?.destroy();
    };
  }, [file, layout]);
  if (error) return <ErrorBox message={`The diff could not be drawn: ${error}`} />;
  return <div ref={ref} class="diff-view" />;
}

function AttemptFacts({ review }: { review: Review }) {
  const attempt: Attempt = review.attempt;
  return (
    <dl class="facts">
      <dt>Candidate</dt>
      <dd>{candidateName(review)}</dd>
      <dt>Task</dt>
      <dd>
        <a href={`/console/tasks/${encodeURIComponent(review.task.task_id)}`}>{review.task.title}</a>
      </dd>
      <dt>Status</dt>
      <dd>
        <StatusBadge status={attempt.status} />
        {attempt.scoring && attempt.scoring.status !== "scored" && (
          <>
            {" "}
            scoring: <StatusBadge status={attempt.scoring.status} />
            {attempt.scoring.reason && <span> {attempt.scoring.reason}</span>}
          </>
        )}
      </dd>
      <dt>Started</dt>
      <dd>{formatDateTime(attempt.started_at)}</dd>
      <dt>Submitted</dt>
      <dd>
        {formatDateTime(attempt.submitted_at)}
        {attempt.auto_submitted && " (by the deadline)"}
      </dd>
      <dt>Time limit</dt>
      <dd>{attempt.time_limit_minutes === null ? "none" : `${attempt.time_limit_minutes} minutes`}</dd>
    </dl>
  );
}

function Scores({ report }: { report: Evidence }) {
  return (
    <section aria-labelledby="scores-heading">
      <h2 id="scores-heading">Scores</h2>
      <p class="overall">
        Overall <strong>{report.overall_score}</strong> of 100
        <span class="muted">
          {" "}
          · rubric {report.rubric_version} · scored {formatDateTime(report.completed_at)}
        </span>
      </p>
      <Chart
        title="Subscores, 0 to 100"
        labelHeading="Subscore"
        labels={SUBSCORES.map((s) => s.label)}
        series={[{ label: "Score", values: SUBSCORES.map((s) => report.subscores[s.key]) }]}
        yMax={100}
      />
      <table>
        <thead>
          <tr>
            <th scope="col">Subscore</th>
            <th scope="col">Score</th>
            <th scope="col">Weight</th>
            <th scope="col">Adds to overall</th>
          </tr>
        </thead>
        <tbody>
          {SUBSCORES.map(({ key, label }) => (
            <tr key={key}>
              <th scope="row">
                <a href={`#evidence-${key}`}>{label}</a>
              </th>
              <td>{report.subscores[key]}</td>
              <td>{Math.round(report.weights[key] * 100)} %</td>
              <td>{(report.subscores[key] * report.weights[key]).toFixed(1)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {report.claims.length > 0 && (
        <table>
          <caption>The candidate's figures beside the measured ones (a gap over 0.25 is flagged)</caption>
          <thead>
            <tr>
              <th scope="col">Figure</th>
              <th scope="col">Claimed</th>
              <th scope="col">Measured</th>
              <th scope="col">Gap</th>
            </tr>
          </thead>
          <tbody>
            {report.claims.map((c) => (
              <tr key={c.figure}>
                <th scope="row">{humanize(c.figure)}</th>
                <td>{c.claimed ?? "—"}</td>
                <td>{c.measured ?? "—"}</td>
                <td class={c.flagged ? "bad" : ""}>
                  {c.gap ?? "—"}
                  {c.flagged && " (flagged)"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The candidate's account of the work from their submission: what a reviewer reads beside the scores. */
function Explanation({ text, autoSubmitted }: { text: string | null; autoSubmitted: boolean }) {
  return (
    <section aria-labelledby="explanation-heading">
      <h2 id="explanation-heading">The candidate's explanation</h2>
      {text ? (
        <blockquote class="explanation">{text}</blockquote>
      ) : (
        <p class="muted">{autoSubmitted ? "None: the attempt was submitted by its deadline, which takes no explanation." : "The candidate submitted without one."}</p>
      )}
    </section>
  );
}

function EvidenceSections({ evidence }: { evidence: Evidence }) {
  return (
    <section aria-labelledby="evidence-heading">
      <h2 id="evidence-heading">Evidence</h2>
      {evidence.flags.length > 0 && (
        <div class="box flags">
          <h3>Points for the reviewer</h3>
          <ul>
            {evidence.flags.map((f) => (
              <li key={f}>{f}</li>
            ))}
          </ul>
        </div>
      )}
      <ReviewFlags flags={evidence.review_flags} />
      {SUBSCORES.map(({ key, label }) => (
        <SubscoreEvidence key={key} id={key} label={label} score={evidence.subscores[key]} value={evidence.evidence[key]}>
          {key === "correctness" && <HiddenTests evidence={evidence} />}
        </SubscoreEvidence>
      ))}
      {evidence.ignored_test_edits.length > 0 && (
        <>
          <h3>Changes to test files that were not scored</h3>
          <TestIds ids={evidence.ignored_test_edits} />
        </>
      )}
      {evidence.excluded_from_hidden_run && evidence.excluded_from_hidden_run.length > 0 && (
        <>
          <h3>Files left at the task's version in the hidden-test run</h3>
          <TestIds ids={evidence.excluded_from_hidden_run} />
        </>
      )}
    </section>
  );
}

/** Changed source lines a reviewer should read, by kind, each with its reason, file and numbered lines. */
function ReviewFlags({ flags }: { flags: ReviewFlag[] | undefined }) {
  const groups = reviewFlagGroups(flags);
  if (groups.length === 0) return null;
  return (
    <section class="box flags" aria-labelledby="review-flags-heading">
      <h3 id="review-flags-heading">Review flags</h3>
      <p>
        <strong>Evidence for the reviewer — not a deduction.</strong> The candidate's changed source lines below do what code under
        test rarely has reason to do. No score was lowered for them: read them and judge.
      </p>
      {groups.map((group) => (
        <section key={group.kind} aria-labelledby={`review-flags-${group.kind}`}>
          <h4 id={`review-flags-${group.kind}`}>
            {group.title} ({group.flags.length})
          </h4>
          <ul>
            {group.flags.map((flag, i) => (
              <li key={`${flag.file}:${i}`}>
                <p>
                  <code>{flag.file}</code>, {lineSummary(flag)}: {flag.reason}
                </p>
                <pre tabIndex={0} role="region" aria-label={`${flag.file}, ${lineSummary(flag)}`}>
                  <code>{numberedLines(flag.lines)}</code>
                </pre>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </section>
  );
}

function SubscoreEvidence({ id, label, score, value, children }: { id: SubscoreKey; label: string; score: number; value: unknown; children?: ComponentChildren }) {
  return (
    <section class="evidence" id={`evidence-${id}`} aria-labelledby={`evidence-${id}-heading`}>
      <h3 id={`evidence-${id}-heading`}>
        {label}: {score}
      </h3>
      {value === undefined ? <p class="muted">No evidence recorded.</p> : <EvidenceView value={value} />}
      {children}
    </section>
  );
}

function HiddenTests({ evidence }: { evidence: Evidence }) {
  return (
    <details>
      <summary>
        All hidden tests ({evidence.hidden_tests.fail_to_pass.length} to make pass, {evidence.hidden_tests.pass_to_pass.length} to keep passing)
      </summary>
      <h4>Fail to pass</h4>
      <TestIds ids={evidence.hidden_tests.fail_to_pass} />
      <h4>Pass to pass</h4>
      <TestIds ids={evidence.hidden_tests.pass_to_pass} />
    </details>
  );
}

// Lists longer than this (failing tests of a broken solution) are cut, saying how many more.
const LIST_LIMIT = 100;

function EvidenceView({ value }: { value: unknown }) {
  const shape = shapeOf(value);
  switch (shape.kind) {
    case "scalar":
      return <span>{shape.text}</span>;
    case "list":
      if (shape.items.length === 0) return <span class="muted">none</span>;
      return (
        <ul class="evidence-list">
          {shape.items.slice(0, LIST_LIMIT).map((item, i) => (
            <li key={i}>
              <code>{item}</code>
            </li>
          ))}
          {shape.items.length > LIST_LIMIT && <li class="muted">and {shape.items.length - LIST_LIMIT} more</li>}
        </ul>
      );
    case "table":
      return (
        <table class="evidence-table">
          <thead>
            <tr>
              {shape.columns.map((c) => (
                <th scope="col" key={c}>
                  {humanize(c)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shape.rows.slice(0, LIST_LIMIT).map((row, i) => (
              <tr key={i}>
                {shape.columns.map((c) => (
                  <td key={c}>
                    <EvidenceView value={row[c] ?? null} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      );
    case "group":
      if (shape.entries.length === 0) return <span class="muted">none</span>;
      return (
        <dl class="evidence-group">
          {shape.entries.map(([k, v]) => (
            <div key={k}>
              <dt>{humanize(k)}</dt>
              <dd>
                <EvidenceView value={v} />
              </dd>
            </div>
          ))}
        </dl>
      );
  }
}
