// Charts of the console (uPlot, drawn on a canvas): bars for one series, lines for several,
// over categories (funnel steps, percentiles, weeks). A canvas says nothing to a screen reader,
// so each chart is an image labelled with its figures, and the same figures are in a table
// under it. uPlot's own stylesheet is not linked by the build; styles.css has the rules it needs.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

export interface ChartSeries {
  label: string;
  values: (number | null)[];
}

interface Props {
  /** The figure's caption. */
  title: string;
  /** The categories along the x axis. */
  labels: string[];
  series: ChartSeries[];
  /** The table's heading of the categories column. */
  labelHeading: string;
  /** Appended to values in the label and the table: "%", " min" (the title names the axis's unit). */
  unit?: string;
  /** The top of the y axis; by default a little above the largest value. */
  yMax?: number;
  /** Whole numbers only (counts): no ticks at fractions. */
  integer?: boolean;
  height?: number;
}

const PALETTE = ["--chart-1", "--chart-2", "--chart-3", "--chart-4", "--chart-5", "--chart-6"];
const FONT = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const MIN_WIDTH = 240;

const show = (value: number | null | undefined, unit = "") => (value === null || value === undefined ? "no data" : `${value}${unit}`);

/** What the chart shows, in words, as the image's label. */
function summary({ title, labels, series, unit, labelHeading }: Props): string {
  if (series.length === 1) return `${title}: ${labels.map((l, i) => `${l} ${show(series[0]!.values[i], unit)}`).join(", ")}.`;
  return `${title}: ${series.map((s) => s.label).join(", ")} by ${labelHeading.toLowerCase()}; the table under the chart has the figures.`;
}

function options(props: Props, el: HTMLElement): uPlot.Options {
  const css = getComputedStyle(el);
  const color = (name: string) => css.getPropertyValue(name).trim() || "#0b5cad";
  const xs = props.labels.map((_, i) => i);
  const bars = props.series.length === 1;
  return {
    width: Math.max(MIN_WIDTH, el.clientWidth),
    height: props.height ?? 220,
    legend: { show: false },
    cursor: { show: false },
    select: { show: false, left: 0, top: 0, width: 0, height: 0 },
    scales: {
      x: { time: false, range: bars ? [-0.5, xs.length - 0.5] : [-0.2, Math.max(0.2, xs.length - 0.8)] },
      y: { range: (_u, _min, max) => [0, props.yMax ?? Math.max(props.integer ? 1 : 0.1, Math.ceil((max || 0) * 1.1))] },
    },
    axes: [
      {
        stroke: color("--fg"),
        font: FONT,
        grid: { show: false },
        ticks: { show: false },
        splits: () => xs,
        values: (_u, splits) => splits.map((s) => props.labels[s] ?? ""),
      },
      {
        stroke: color("--fg"),
        font: FONT,
        size: 56,
        grid: { stroke: color("--line"), width: 1 },
        ...(props.integer ? { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000] } : {}),
      },
    ],
    series: [
      {},
      ...props.series.map((s, i) => {
        const c = color(PALETTE[i % PALETTE.length]!);
        return bars
          ? { label: s.label, stroke: c, fill: c, width: 0, paths: uPlot.paths.bars!({ size: [0.6, 72] }), points: { show: false } }
          : { label: s.label, stroke: c, width: 2, points: { show: true, size: 6, fill: c, stroke: c } };
      }),
    ],
  };
}

export function Chart(props: Props) {
  const box = useRef<HTMLDivElement>(null);
  const key = JSON.stringify([props.labels, props.series, props.unit, props.yMax, props.integer, props.height]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts = options(props, el);
    const chart = new uPlot(opts, [props.labels.map((_, i) => i), ...props.series.map((s) => s.values)], el);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(MIN_WIDTH, el.clientWidth), height: opts.height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [key]);

  const unit = props.unit ?? "";
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div class="chart-plot" ref={box} role="img" aria-label={summary(props)} />
      {props.series.length > 1 && (
        <ul class="chart-legend">
          {props.series.map((s, i) => (
            <li key={s.label}>
              <span class="swatch" style={{ background: `var(${PALETTE[i % PALETTE.length]})` }} aria-hidden="true" />
              {s.label}
            </li>
          ))}
        </ul>
      )}
      <details class="chart-data">
        <summary>The figures of “{props.title}”</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">{props.labelHeading}</th>
              {props.series.map((s) => (
                <th scope="col" key={s.label}>
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.labels.map((label, i) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                {props.series.map((s) => (
                  <td key={s.label}>{show(s.values[i], unit)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
