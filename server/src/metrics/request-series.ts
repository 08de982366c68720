// The per-request series (count and latency by method, route and status), kept outside
// prom-client's own Histogram: its observe() hashes the label values into a string and builds
// a label object on every call, which is allocation on the hot path. Here a request finds its
// series through three Map lookups on strings it already has (method, route pattern) and its
// status number, then bumps a bucket in a Float64Array: no allocation once the series exists.
// The registry reads the series only when scraped, through the two metric objects below.

import type { Metric, Registry } from 'prom-client';

/** Upper bounds in seconds: most answers take milliseconds, a slow upstream can take seconds. */
export const REQUEST_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

class Series {
  readonly labels: Readonly<Record<'method' | 'route' | 'status', string>>;
  /** Observations per bucket, not cumulative (the last slot counts what exceeds every bound). */
  readonly counts = new Float64Array(REQUEST_BUCKETS.length + 1);
  sum = 0;
  count = 0;
  constructor(method: string, route: string, status: number) {
    this.labels = { method, route, status: String(status) };
  }
  observe(seconds: number): void {
    let i = 0;
    while (i < REQUEST_BUCKETS.length && seconds > (REQUEST_BUCKETS[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += seconds;
    this.count++;
  }
}

/** Route label of requests that matched no route: one value, whatever URL was asked for. */
export const UNMATCHED_ROUTE = 'unmatched';

export class RequestSeries {
  readonly #byMethod = new Map<string, Map<string, Map<number, Series>>>();
  readonly #all: Series[] = [];

  /**
   * Count one answered request. `route` is the route's pattern (never the raw URL, so the
   * number of series is bounded by the routes × statuses), or undefined when nothing matched.
   */
  record(method: string, route: string | undefined, status: number, seconds: number): void {
    const pattern = route ?? UNMATCHED_ROUTE;
    let byRoute = this.#byMethod.get(method);
    if (byRoute === undefined) {
      byRoute = new Map();
      this.#byMethod.set(method, byRoute);
    }
    let byStatus = byRoute.get(pattern);
    if (byStatus === undefined) {
      byStatus = new Map();
      byRoute.set(pattern, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      series = new Series(method, pattern, status);
      byStatus.set(status, series);
      this.#all.push(series);
    }
    series.observe(seconds);
  }

  /** Register the request counter and the latency histogram, both read from these series. */
  register(registry: Registry, names: { counter: string; histogram: string }): void {
    const all = this.#all;
    registry.registerMetric(
      collected(names.counter, 'HTTP requests answered, by method, route pattern and status', 'counter', () =>
        all.map((s) => ({ labels: s.labels, value: s.count })),
      ),
    );
    const bucket = `${names.histogram}_bucket`;
    const sum = `${names.histogram}_sum`;
    const count = `${names.histogram}_count`;
    registry.registerMetric(
      collected(
        names.histogram,
        'HTTP request duration in seconds, by method, route pattern and status',
        'histogram',
        () => {
          const values: Value[] = [];
          for (const s of all) {
            let cumulative = 0;
            for (let i = 0; i < REQUEST_BUCKETS.length; i++) {
              cumulative += s.counts[i] as number;
              values.push({
                labels: { ...s.labels, le: REQUEST_BUCKETS[i] as number },
                value: cumulative,
                metricName: bucket,
              });
            }
            values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: bucket });
            values.push({ labels: s.labels, value: s.sum, metricName: sum });
            values.push({ labels: s.labels, value: s.count, metricName: count });
          }
          return values;
        },
      ),
    );
  }
}

interface Value {
  labels: Readonly<Record<string, string | number>>;
  value: number;
  metricName?: string;
}

/**
 * A metric whose values are computed when scraped. prom-client's registry reads any object with
 * a name and a get() returning this shape (it is how its own classes are read); its types only
 * name its classes, hence the one cast.
 */
function collected(name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]): Metric {
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
  };
  return metric as unknown as Metric;
}
