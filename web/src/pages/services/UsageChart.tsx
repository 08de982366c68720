// The usage graph: GET /services/graph/ for a timeframe, drawn as an inline SVG line chart (no
// chart package). One metric at a time (CPU, memory, network, disk); a second series is dashed
// so that colour is never the only difference. The chart is an image with a text summary
// (average, peak and when, gaps) for screen readers and for anyone who prefers words, and the
// points can be opened as a table.

import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Button, ErrorAlert, Loading } from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';
import { bytes, when } from '../../lib/format.ts';

const TIMEFRAMES = [
  ['hour', 'Hour'],
  ['day', 'Day'],
  ['week', 'Week'],
  ['month', 'Month'],
  ['year', 'Year'],
] as const;

type Point = {
  time: string;
  cpu: number | null;
  memory_bytes: number | null;
  net_in_bytes_per_second: number | null;
  net_out_bytes_per_second: number | null;
  disk_read_bytes_per_second: number | null;
  disk_write_bytes_per_second: number | null;
};

interface Metric {
  key: string;
  label: string;
  series: { name: string; pick: (p: Point) => number | null }[];
  format: (v: number) => string;
  /** A fixed top of the scale (CPU: 100 %), else the data's peak. */
  max?: number;
}

const rate = (v: number) => `${bytes(v)}/s`;

const METRICS: Metric[] = [
  {
    key: 'cpu',
    label: 'CPU',
    series: [{ name: 'CPU', pick: (p) => (p.cpu === null ? null : p.cpu * 100) }],
    format: (v) => `${v.toFixed(v < 10 ? 1 : 0)} %`,
    max: 100,
  },
  { key: 'memory', label: 'Memory', series: [{ name: 'Memory used', pick: (p) => p.memory_bytes }], format: bytes },
  {
    key: 'network',
    label: 'Network',
    series: [
      { name: 'In', pick: (p) => p.net_in_bytes_per_second },
      { name: 'Out', pick: (p) => p.net_out_bytes_per_second },
    ],
    format: rate,
  },
  {
    key: 'disk',
    label: 'Disk',
    series: [
      { name: 'Read', pick: (p) => p.disk_read_bytes_per_second },
      { name: 'Write', pick: (p) => p.disk_write_bytes_per_second },
    ],
    format: rate,
  },
];

const W = 640;
const H = 220;
const PAD = { left: 8, right: 8, top: 12, bottom: 12 };

function summary(metric: Metric, points: Point[], timeframe: string): string {
  if (points.length === 0) return `No data for the last ${timeframe}.`;
  const parts: string[] = [];
  for (const s of metric.series) {
    const values = points.map((p) => ({ t: p.time, v: s.pick(p) })).filter((x) => x.v !== null) as {
      t: string;
      v: number;
    }[];
    if (values.length === 0) {
      parts.push(`${s.name}: no data in the last ${timeframe}.`);
      continue;
    }
    const avg = values.reduce((a, x) => a + x.v, 0) / values.length;
    const peak = values.reduce((a, x) => (x.v > a.v ? x : a));
    const last = values[values.length - 1] as { t: string; v: number };
    parts.push(
      `${s.name}: average ${metric.format(avg)}, peak ${metric.format(peak.v)} at ${when(peak.t)}, latest ${metric.format(last.v)}.`,
    );
  }
  const gaps = points.filter((p) => metric.series.every((s) => s.pick(p) === null)).length;
  if (gaps > 0) parts.push(`${gaps} of ${points.length} points have no data (the server was off or not yet created).`);
  return parts.join(' ');
}

function paths(values: (number | null)[], max: number): string {
  const n = values.length;
  const x = (i: number) => PAD.left + (n <= 1 ? 0 : (i / (n - 1)) * (W - PAD.left - PAD.right));
  const y = (v: number) => PAD.top + (1 - Math.min(v, max) / max) * (H - PAD.top - PAD.bottom);
  let d = '';
  let pen = false;
  values.forEach((v, i) => {
    if (v === null) {
      pen = false;
      return;
    }
    d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)} `;
    // A point with no neighbour is drawn as a dot (round caps on a tiny stroke).
    const next = values[i + 1];
    if (!pen && (next === null || next === undefined)) d += 'l0.5,0 ';
    pen = true;
  });
  return d.trim();
}

export function UsageChart({ serviceId }: { serviceId: number }) {
  const [timeframe, setTimeframe] = useState<string>('hour');
  const [metricKey, setMetricKey] = useState('cpu');
  const [showTable, setShowTable] = useState(false);
  const id = useId();
  const metric = METRICS.find((m) => m.key === metricKey) ?? (METRICS[0] as Metric);

  const graph = useQuery({
    queryKey: ['service-graph', serviceId, timeframe],
    queryFn: () =>
      unwrap(api.GET('/api/v1/client/services/graph/', { params: { query: { id: serviceId, timeframe } } })),
    refetchInterval: timeframe === 'hour' ? 60_000 : false,
    retry: false,
  });

  const points = (graph.data?.points ?? []) as Point[];
  const all = metric.series.flatMap((s) => points.map(s.pick)).filter((v): v is number => v !== null);
  const peak = all.length ? Math.max(...all) : 0;
  const max = metric.max ?? (peak > 0 ? peak * 1.1 : 1);
  const first = points[0]?.time;
  const last = points[points.length - 1]?.time;
  const text = graph.data ? summary(metric, points, timeframe) : '';

  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Usage</h2>
      <div className="usage-controls">
        <fieldset className="tabs">
          <legend className="sr-only">Timeframe</legend>
          {TIMEFRAMES.map(([value, label]) => (
            <button key={value} type="button" aria-pressed={timeframe === value} onClick={() => setTimeframe(value)}>
              {label}
            </button>
          ))}
        </fieldset>
        <fieldset className="tabs">
          <legend className="sr-only">Metric</legend>
          {METRICS.map((m) => (
            <button key={m.key} type="button" aria-pressed={metricKey === m.key} onClick={() => setMetricKey(m.key)}>
              {m.label}
            </button>
          ))}
        </fieldset>
      </div>
      {graph.isPending ? <Loading what="Loading the graph" /> : null}
      {graph.isError ? <ErrorAlert error={graph.error} /> : null}
      {graph.data ? (
        <figure className="chart">
          <div className="chart-scale muted" aria-hidden="true">
            <span>{metric.format(max)}</span>
            <span>{metric.format(max / 2)}</span>
            <span>{metric.format(0)}</span>
          </div>
          <svg
            viewBox={`0 0 ${W} ${H}`}
            role="img"
            aria-labelledby={`${id}-t`}
            aria-describedby={`${id}-s`}
            preserveAspectRatio="none"
          >
            <title id={`${id}-t`}>{`${metric.label} over the last ${timeframe}`}</title>
            {[0, 0.25, 0.5, 0.75, 1].map((f) => (
              <line
                key={f}
                x1={PAD.left}
                x2={W - PAD.right}
                y1={PAD.top + f * (H - PAD.top - PAD.bottom)}
                y2={PAD.top + f * (H - PAD.top - PAD.bottom)}
                className="chart-grid"
              />
            ))}
            {metric.series.map((s, i) => (
              <path
                key={s.name}
                d={paths(points.map(s.pick), max)}
                className={`chart-line chart-line-${i}`}
                vectorEffect="non-scaling-stroke"
              />
            ))}
          </svg>
          <div className="chart-axis muted" aria-hidden="true">
            <span>{first ? when(first) : ''}</span>
            <span>{last ? when(last) : ''}</span>
          </div>
          <figcaption>
            {metric.series.length > 1 ? (
              <ul className="chart-legend">
                {metric.series.map((s, i) => (
                  <li key={s.name}>
                    <svg width="28" height="10" aria-hidden="true">
                      <line x1="0" x2="28" y1="5" y2="5" className={`chart-line chart-line-${i}`} />
                    </svg>
                    {s.name} {i === 0 ? '(solid)' : '(dashed)'}
                  </li>
                ))}
              </ul>
            ) : null}
            <p id={`${id}-s`} className="chart-summary">
              {text}
            </p>
          </figcaption>
          <Button variant="ghost" aria-expanded={showTable} onClick={() => setShowTable((v) => !v)}>
            {showTable ? 'Hide the data table' : 'Show the data as a table'}
          </Button>
          {showTable ? (
            <div className="table-wrap chart-table">
              <table>
                <caption className="sr-only">{`${metric.label}, last ${timeframe}`}</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    {metric.series.map((s) => (
                      <th key={s.name} scope="col" className="num">
                        {s.name}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {points.map((p) => (
                    <tr key={p.time}>
                      <td>{when(p.time)}</td>
                      {metric.series.map((s) => {
                        const v = s.pick(p);
                        return (
                          <td key={s.name} className="num">
                            {v === null ? '—' : metric.format(v)}
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </figure>
      ) : null}
    </section>
  );
}
