// The candidate's score report on their attempt's page, once scored: the overall score, the
// subscores, what scoring found of the tests and their own explanation. The API gives the
// candidate their view of the report (no hidden test names, files or reviewer flags); staff who
// open the page are sent to the console's report, which has the whole of it.
import type { components } from "../../../client/src/index";
import { read, useLoad } from "../lib/data";
import { ErrorBox, Loading } from "../components/states";
import { subscoreRows, testFindings, type CandidateReport } from "./score-words";

/** The report as the attempt's page read it (`GET /attempts/{id}/workspace`): null when it was not scored yet. */
type ViewedReport = components["schemas"]["WorkspaceView"]["score_report"];

/** `report`: what the page's view brought; asked for only when it brought none (scored since it was read). */
export function ScorePanel({ attemptId, report }: { attemptId: string; report: ViewedReport }) {
  const loaded = useLoad(
    () => (report ? Promise.resolve(report) : read("/api/v1/attempts/{attempt_id}/score-report", { params: { path: { attempt_id: attemptId } } })),
    [attemptId, report],
  );
  if (loaded.error) return <ErrorBox message={loaded.error} onRetry={loaded.reload} />;
  if (!loaded.data) return <Loading what="Loading your score" />;
  if (loaded.data.view === "staff") {
    return (
      <p>
        This is a candidate's attempt: its whole report is in the console, <a href={`/console/attempts/${encodeURIComponent(attemptId)}/report`}>Score report</a>.
      </p>
    );
  }
  return <CandidateScore report={loaded.data} />;
}

function CandidateScore({ report }: { report: CandidateReport }) {
  return (
    <div class="score-panel">
      <h2 class="pane-title">Your score</h2>
      <p class="overall">
        Overall <strong>{report.overall_score}</strong> of 100
        <span class="muted"> · scored {new Date(report.completed_at).toLocaleString()}</span>
      </p>
      <table>
        <caption>Subscores, each 0 to 100, and what each adds to the overall score</caption>
        <thead>
          <tr>
            <th scope="col">Subscore</th>
            <th scope="col">Score</th>
            <th scope="col">Weight</th>
            <th scope="col">Adds</th>
          </tr>
        </thead>
        <tbody>
          {subscoreRows(report).map((row) => (
            <tr key={row.key}>
              <th scope="row">{row.label}</th>
              <td>{row.score}</td>
              <td>{row.weightPercent} %</td>
              <td>{row.adds}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Tests</h3>
      <ul>
        {testFindings(report).map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
      <h3>Your explanation</h3>
      {report.explanation ? <blockquote class="explanation">{report.explanation}</blockquote> : <p class="muted">You submitted without one.</p>}
    </div>
  );
}
