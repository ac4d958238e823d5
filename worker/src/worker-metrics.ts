import { Counter, Gauge, Histogram, metricsRegistry } from '@strata/common';

/** Worker metrics, registered once per process (several engines in one test process share them). */
export interface WorkerMetrics {
  appendedRows: Counter;
  appendSeconds: Histogram;
  duplicateAppends: Counter;
  refusedAppends: Counter<'reason'>;
  sealedSegments: Counter;
  compactions: Counter;
  hotRows: Gauge;
  expiredRows: Counter;
  storedRows: Gauge<'account' | 'schema'>;
  storedBytes: Gauge<'account' | 'schema'>;
  freeBytes: Gauge;
  writable: Gauge;
  underReplicated: Gauge;
  ownSegments: Gauge;
  replicaSegments: Gauge;
  replicationRounds: Counter;
}

let metrics: WorkerMetrics | undefined;

export function workerMetrics(): WorkerMetrics {
  if (metrics) return metrics;
  const registers = [metricsRegistry()];
  metrics = {
    appendedRows: new Counter({ name: 'strata_worker_appended_rows_total', help: 'Rows committed to the hot buffer', registers }),
    appendSeconds: new Histogram({
      name: 'strata_worker_append_seconds',
      help: 'Time from receiving an append to its durable commit',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    duplicateAppends: new Counter({
      name: 'strata_worker_duplicate_appends_total',
      help: 'Appends answered from a stored idempotency key without writing',
      registers,
    }),
    refusedAppends: new Counter({
      name: 'strata_worker_refused_appends_total',
      help: 'Appends refused, by reason',
      labelNames: ['reason'],
      registers,
    }),
    sealedSegments: new Counter({
      name: 'strata_worker_sealed_segments_total',
      help: 'Hot buffer seals into Parquet segments',
      registers,
    }),
    compactions: new Counter({ name: 'strata_worker_compactions_total', help: 'Compaction jobs completed', registers }),
    hotRows: new Gauge({
      name: 'strata_worker_hot_rows',
      help: 'Rows in the hot buffer not yet sealed (approximate)',
      registers,
    }),
    expiredRows: new Counter({
      name: 'strata_worker_expired_rows_total',
      help: 'Rows deleted because they were past retention',
      registers,
    }),
    storedRows: new Gauge({
      name: 'strata_worker_stored_rows',
      help: 'Rows held per account and schema (segments, plus approximate hot rows), refreshed by each retention pass',
      labelNames: ['account', 'schema'],
      registers,
    }),
    storedBytes: new Gauge({
      name: 'strata_worker_stored_bytes',
      help: 'Bytes of segment files per account and schema, refreshed by each retention pass',
      labelNames: ['account', 'schema'],
      registers,
    }),
    freeBytes: new Gauge({ name: 'strata_worker_free_bytes', help: 'Free bytes on the data path at the last check', registers }),
    writable: new Gauge({ name: 'strata_worker_writable', help: '1 while the worker accepts writes', registers }),
    underReplicated: new Gauge({
      name: 'strata_worker_under_replicated_segments',
      help: "This worker's sealed segments with fewer copies than backend.replicationFactor at the last replication round",
      registers,
    }),
    ownSegments: new Gauge({
      name: 'strata_worker_own_segments',
      help: 'Segments this worker is the primary of, at the last replication round',
      registers,
    }),
    replicaSegments: new Gauge({
      name: 'strata_worker_replica_segments',
      help: "Replicas of other workers' segments held here, at the last replication round",
      registers,
    }),
    // The three gauges above describe the last completed round: after a write-off or a
    // promotion they are only current once a round that began afterwards has completed.
    replicationRounds: new Counter({
      name: 'strata_worker_replication_rounds_total',
      help: 'Replication rounds completed (the replication gauges describe the last one)',
      registers,
    }),
  };
  return metrics;
}
