import { Counter, Histogram, metricsRegistry } from '@strata/common';

export interface InflowMetrics {
  entries: Counter<'result'>;
  requests: Counter<'route' | 'status'>;
  seconds: Histogram<'route'>;
  jsonBodies: Counter<'path'>;
}

let metrics: InflowMetrics | undefined;

/** Gateway inflow metrics (registered once per process). */
export function inflowMetrics(): InflowMetrics {
  if (metrics) return metrics;
  const registers = [metricsRegistry()];
  metrics = {
    entries: new Counter({
      name: 'strata_gateway_inflow_entries_total',
      help: 'Inflow entries by result: stored, dropped_out_of_scope (outside the token inflow scope, answered 200), refused (malformed batch or failed write)',
      labelNames: ['result'],
      registers,
    }),
    requests: new Counter({
      name: 'strata_gateway_inflow_requests_total',
      help: 'Inflow requests by route (json, csv, tsv, file: another extension) and HTTP status',
      labelNames: ['route', 'status'],
      registers,
    }),
    seconds: new Histogram({
      name: 'strata_gateway_inflow_seconds',
      help: 'Inflow request time until every accepted entry was durable',
      labelNames: ['route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    jsonBodies: new Counter({
      name: 'strata_gateway_inflow_json_bodies_total',
      help: 'JSON inflow bodies by how they were encoded for the worker: bytes (stored as sent, the fast path) or parsed (JSON.parse and re-encoding: values that are rewritten, and every refused body)',
      labelNames: ['path'],
      registers,
    }),
  };
  return metrics;
}
