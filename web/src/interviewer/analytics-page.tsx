// Organization analytics (docs/api.md, "Analytics") as charts: the funnel, the score
// distributions, time to submit and the weekly trend, each with its figures in a table; the
// per-task breakdown. The window and the task are in the address, so a view can be shared.
import { useEffect, useState } from "preact/hooks";
import { api, call, useLoad } from "../lib/data";
import { Empty, ErrorBox, Loading } from "../components/states";
import type { PageProps } from "../lib/page";
import { navigate } from "../lib/router";
import { analyticsQuery, filterDates, funnelRows, PERCENTILES, percentiles, scoreRows, SUBSCORES, type Analytics, type Distribution } from "./analytics";
import { Chart } from "./charts";
import { formatDuration } from "./format";
import { NoOrganization, useOrganization } from "./parts";

export function AnalyticsPage({ query }: PageProps) {
  const org = useOrganization();
  return (
    <>
      <h1>Analytics</h1>
      {org ? <OrganizationAnalytics org={org} query={query} /> : <NoOrganization />}
    </>
  );
}

function OrganizationAnalytics({ org, query }: { org: string; query: URLSearchParams }) {
  const from = query.get("from") ?? "";
  const to = query.get("to") ?? "";
  const taskId = query.get("task_id") ?? "";
  const analytics = useLoad(
    () =>
      call(
        api.GET("/api/v1/analytics/org/{org_id}", {
          params: { path: { org_id: org }, query: { ...(from ? { from } : {}), ...(to ? { to } : {}), ...(taskId ? { task_id: taskId } : {}) } },
        }),
      ),
    [org, from, to, taskId],
  );
  const a = analytics.data;
  return (
    <>
      <Filter {...filterDates({ from, to }, a?.window)} taskId={taskId} tasks={a?.tasks ?? []} />
      {analytics.error ? (
        <ErrorBox message={analytics.error} onRetry={analytics.reload} />
      ) : !a ? (
        <Loading what="Loading analytics" />
      ) : (
        <>
          <p>
            From {a.window.from} to {a.window.to} ({a.window.days} days, UTC){a.task_id ? `, for one task` : ", all tasks"}.
          </p>
          <FunnelSection funnel={a.funnel} />
          <ScoresSection scores={a.scores} />
          <TimeSection time={a.time_to_submit_seconds} />
          <WeeksSection weeks={a.weeks} />
          <TasksSection tasks={a.tasks} />
        </>
      )}
    </>
  );
}

function Filter(props: { from: string; to: string; taskId: string; tasks: Analytics["tasks"] }) {
  const [from, setFrom] = useState(props.from);
  const [to, setTo] = useState(props.to);
  const [taskId, setTaskId] = useState(props.taskId);
  useEffect(() => {
    setFrom(props.from);
    setTo(props.to);
    setTaskId(props.taskId);
  }, [props.from, props.to, props.taskId]);
  const submit = (event: Event) => {
    event.preventDefault();
    navigate(`/console/analytics${analyticsQuery({ from, to, taskId })}`);
  };
  const known = props.tasks.some((t) => t.task_id === taskId);
  return (
    <form class="row filters" onSubmit={submit} aria-label="Window and task">
      <div>
        <label for="analytics-from">From (UTC day)</label>
        <input id="analytics-from" type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
      </div>
      <div>
        <label for="analytics-to">To (UTC day)</label>
        <input id="analytics-to" type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
      </div>
      <div>
        <label for="analytics-task">Task</label>
        <select id="analytics-task" value={taskId} onChange={(e) => setTaskId(e.currentTarget.value)}>
          <option value="">All tasks</option>
          {taskId && !known && <option value={taskId}>{taskId}</option>}
          {props.tasks.map((t) => (
            <option key={t.task_id} value={t.task_id}>
              {t.title}
            </option>
          ))}
        </select>
      </div>
      <button type="submit">Show</button>
    </form>
  );
}

function FunnelSection({ funnel }: { funnel: Analytics["funnel"] }) {
  const rows = funnelRows(funnel);
  return (
    <section aria-labelledby="funnel-heading">
      <h2 id="funnel-heading">Funnel</h2>
      <p class="muted">Invitations created in the window and how far they got; attempts created in the window and how far they got.</p>
      <Chart title="Funnel" labelHeading="Step" labels={rows.map((r) => r.label)} series={[{ label: "Count", values: rows.map((r) => r.value) }]} integer />
      <table>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Count</th>
            <th scope="col">Of the step before</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key}>
              <th scope="row">{r.label}</th>
              <td>{r.value}</td>
              <td>{r.ofPrevious === null ? "—" : `${r.ofPrevious} %`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

const PERCENTILE_LABELS = PERCENTILES.map((p) => p.label);

function ScoresSection({ scores }: { scores: Analytics["scores"] }) {
  return (
    <section aria-labelledby="scores-heading">
      <h2 id="scores-heading">Scores</h2>
      {scores.overall.count === 0 ? (
        <Empty>No attempt in the window has been scored yet.</Empty>
      ) : (
        <>
          <p class="muted">Percentiles by nearest rank over the {scores.overall.count} scored attempts: a tenth of them scored at or below the 10th.</p>
          <div class="charts">
            <Chart title="Overall score by percentile" labelHeading="Percentile" labels={PERCENTILE_LABELS} series={[{ label: "Overall", values: percentiles(scores.overall) }]} yMax={100} />
            <Chart
              title="Subscores by percentile"
              labelHeading="Percentile"
              labels={PERCENTILE_LABELS}
              series={SUBSCORES.map(({ key, label }) => ({ label, values: percentiles(scores.subscores[key]) }))}
              yMax={100}
            />
          </div>
          <DistributionTable caption="Score distributions (0 to 100)" rows={scoreRows(scores)} />
        </>
      )}
    </section>
  );
}

function DistributionTable({ caption, rows, format = String }: { caption: string; rows: { label: string; d: Distribution }[]; format?: (n: number) => string }) {
  const cell = (n: number | null) => (n === null ? "—" : format(n));
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Of</th>
          <th scope="col">Count</th>
          <th scope="col">Mean</th>
          {PERCENTILES.map((p) => (
            <th scope="col" key={p.key}>
              {p.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map(({ label, d }) => (
          <tr key={label}>
            <th scope="row">{label}</th>
            <td>{d.count}</td>
            <td>{cell(d.mean)}</td>
            {PERCENTILES.map((p) => (
              <td key={p.key}>{cell(d[p.key])}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function TimeSection({ time }: { time: Distribution }) {
  // Quick attempts read better in seconds than in hundredths of a minute.
  const inMinutes = (time.p90 ?? 0) >= 120;
  return (
    <section aria-labelledby="time-heading">
      <h2 id="time-heading">Time to submit</h2>
      {time.count === 0 ? (
        <Empty>No attempt in the window has been submitted yet.</Empty>
      ) : (
        <>
          <p class="muted">
            From start to submission over {time.count} submitted attempts (those submitted by the deadline included); mean {formatDuration(time.mean ?? 0)}.
          </p>
          <Chart
            title={`${inMinutes ? "Minutes" : "Seconds"} to submit by percentile`}
            labelHeading="Percentile"
            labels={PERCENTILE_LABELS}
            series={[{ label: inMinutes ? "Minutes" : "Seconds", values: percentiles(time, inMinutes ? 60 : 1) }]}
            unit={inMinutes ? " min" : " s"}
          />
          <DistributionTable caption="Time to submit" rows={[{ label: "Submitted attempts", d: time }]} format={formatDuration} />
        </>
      )}
    </section>
  );
}

function WeeksSection({ weeks }: { weeks: Analytics["weeks"] }) {
  if (weeks.length === 0) return null;
  // "2026-11-16" → "11-16": a dozen full dates do not fit under a chart.
  const labels = weeks.map((w) => w.week_start.slice(5));
  return (
    <section aria-labelledby="weeks-heading">
      <h2 id="weeks-heading">By week</h2>
      <Chart
        title="Invitations and attempts by week (weeks start on Monday)"
        labelHeading="Week of"
        labels={labels}
        series={[
          { label: "Invited", values: weeks.map((w) => w.invited) },
          { label: "Attempts", values: weeks.map((w) => w.attempts) },
          { label: "Submitted", values: weeks.map((w) => w.submitted) },
          { label: "Scored", values: weeks.map((w) => w.scored) },
        ]}
        integer
      />
      <Chart title="Mean overall score by week" labelHeading="Week of" labels={labels} series={[{ label: "Mean score", values: weeks.map((w) => w.mean_overall_score) }]} yMax={100} />
    </section>
  );
}

function TasksSection({ tasks }: { tasks: Analytics["tasks"] }) {
  return (
    <section aria-labelledby="by-task-heading">
      <h2 id="by-task-heading">By task</h2>
      {tasks.length === 0 ? (
        <Empty>No task had an invitation or an attempt in the window.</Empty>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Invited</th>
              <th scope="col">Accepted</th>
              <th scope="col">Attempts</th>
              <th scope="col">Started</th>
              <th scope="col">Submitted</th>
              <th scope="col">Scored</th>
              <th scope="col">Mean score</th>
              <th scope="col">Median score</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((t) => (
              <tr key={t.task_id}>
                <th scope="row">
                  <a href={`/console/tasks/${encodeURIComponent(t.task_id)}`}>{t.title}</a>
                </th>
                <td>{t.invited}</td>
                <td>{t.accepted}</td>
                <td>{t.attempts}</td>
                <td>{t.started}</td>
                <td>{t.submitted}</td>
                <td>{t.scored}</td>
                <td>{t.mean_overall_score ?? "—"}</td>
                <td>{t.median_overall_score ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
