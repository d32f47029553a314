// The "Similarity" section of the score report page: GET .../evaluation/similarity, the
// submission against the task's upstream solution and the task's other submissions, with the
// matching regions side by side. Read when the reviewer opens it, so the page still loads with
// two API calls (docs/web-app.md); polled while the comparison is pending.
import { useEffect, useState } from "preact/hooks";
import { api, call, useLoad } from "../lib/data";
import { ErrorBox, Loading } from "../components/states";
import { numberedText, percent, sideLabel, similaritySummary, similarityWords, type SimilarityRegion } from "./similarity";

const PENDING_POLL_MS = 3000;

export function SimilaritySection({ attemptId }: { attemptId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <section aria-labelledby="similarity-heading">
      <h2 id="similarity-heading">Similarity</h2>
      <p>
        <strong>Evidence for the reviewer — not a deduction.</strong> The changed source files, names, literals, comments and layout
        aside, against the pull request's own fix and the other submissions of this task in your organization. No score reads it.
      </p>
      <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>Compare with the upstream solution and the other submissions</summary>
        {open && <SimilarityBody attemptId={attemptId} />}
      </details>
    </section>
  );
}

function SimilarityBody({ attemptId }: { attemptId: string }) {
  // Each poll is a new `polls`: a reload would also empty the views other pages keep.
  const [polls, setPolls] = useState(0);
  const loaded = useLoad(
    () => call(api.GET("/api/v1/attempts/{attempt_id}/evaluation/similarity", { params: { path: { attempt_id: attemptId } } })),
    [attemptId, polls],
  );
  const pending = loaded.data?.status === "pending";
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(() => setPolls((n) => n + 1), PENDING_POLL_MS);
    return () => clearTimeout(timer);
  }, [pending, loaded.data]);
  const view = loaded.data;
  return (
    <>
      {loaded.error ? (
        <ErrorBox message={`The similarity could not be loaded: ${loaded.error}`} onRetry={loaded.reload} />
      ) : !view ? (
        <Loading what="Loading the similarity" />
      ) : (
        <>
          <p role="status">{similaritySummary(view)}</p>
          {view.upstream && (
            <Comparison title="The upstream solution" other="The upstream solution" similarity={view.upstream.similarity} regions={view.upstream.regions} />
          )}
          {view.peers.map((peer) => (
            <Comparison
              key={peer.attempt_id}
              title={peer.candidate.email ?? peer.candidate.id}
              href={`/console/attempts/${encodeURIComponent(peer.attempt_id)}/report`}
              other="Their submission"
              similarity={peer.similarity}
              regions={peer.regions}
            />
          ))}
        </>
      )}
    </>
  );
}

function Comparison(props: { title: string; href?: string; other: string; similarity: number; regions: SimilarityRegion[] }) {
  const words = similarityWords(props.similarity);
  return (
    <details open={words.level === "high"}>
      <summary>
        {props.href ? <a href={props.href}>{props.title}</a> : props.title}: <strong class={words.level === "high" ? "bad" : ""}>{percent(props.similarity)}</strong>{" "}
        <span class="muted">{words.text}</span>
      </summary>
      {props.regions.length === 0 ? (
        <p class="muted">No matching regions.</p>
      ) : (
        props.regions.map((region, i) => (
          <div key={i} class="side-by-side">
            <RegionColumn heading="This submission" side={region.left} />
            <RegionColumn heading={props.other} side={region.right} />
          </div>
        ))
      )}
    </details>
  );
}

function RegionColumn({ heading, side }: { heading: string; side: SimilarityRegion["left"] }) {
  const label = `${heading}: ${sideLabel(side)}`;
  return (
    <figure>
      <figcaption>{label}</figcaption>
      <pre tabIndex={0} role="region" aria-label={label}>
        <code>{numberedText(side)}</code>
      </pre>
    </figure>
  );
}
