import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * One Prometheus registry per process. Roles register their metrics here with a `strata_` prefix;
 * `/metrics` of every role serves it.
 */
let registry: Registry | undefined;

export function metricsRegistry(): Registry {
  if (!registry) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'strata_process_' });
  }
  return registry;
}

/** Metric types for every workspace, so that roles need no prom-client dependency of their own. */
export { Counter, Gauge, Histogram } from 'prom-client';
