import {
  type ChannelPool,
  type Coordinator,
  Counter,
  DEFAULT_EXECUTOR_LIMITS,
  type ExecutorLimits,
  errorFields,
  Gauge,
  type Logger,
  metricsRegistry,
  type Unsubscribe,
} from '@strata/common';
import { SettingsServiceService } from '@strata/proto/settings/v1/settings';
import { MasterPollLoop } from './master-poll-loop.js';

/** How often the master is asked for the executor limits (a change must take effect "after a short delay", docs/api.md, Settings). */
const EXECUTOR_SETTINGS_POLL_MS = 2_000;

/** Failed polls in a row before a warning is logged (once, until a poll succeeds again). */
const WARN_AFTER_FAILURES = 5;

interface ExecutorMetrics {
  queryMaxConcurrent: Gauge;
  fileMaxConcurrentRead: Gauge;
  rowgroupMaxConcurrentRead: Gauge;
  pollFailures: Counter;
}

let metrics: ExecutorMetrics | undefined;

/** The applied limits as gauges in the process registry (created once per process). */
function executorMetrics(): ExecutorMetrics {
  if (metrics) return metrics;
  const registers = [metricsRegistry()];
  metrics = {
    queryMaxConcurrent: new Gauge({
      name: 'strata_executor_query_max_concurrent',
      help: 'Applied Service.Search.Executor.Query.MaxConcurrent: concurrent queries per executor.',
      registers,
    }),
    fileMaxConcurrentRead: new Gauge({
      name: 'strata_executor_file_max_concurrent_read',
      help: 'Applied Service.Search.Executor.File.MaxConcurrentRead: concurrent file reads, globally.',
      registers,
    }),
    rowgroupMaxConcurrentRead: new Gauge({
      name: 'strata_executor_rowgroup_max_concurrent_read',
      help: 'Applied Service.Search.Executor.File.Rowgroup.MaxConcurrentRead: concurrent rowgroup reads per executor.',
      registers,
    }),
    pollFailures: new Counter({
      name: 'strata_executor_settings_poll_failures_total',
      help: 'Polls of the executor settings that reached no master leader or failed; the last applied values stay in force.',
      registers,
    }),
  };
  return metrics;
}

export type ExecutorLimitsListener = (limits: Readonly<ExecutorLimits>, previous: Readonly<ExecutorLimits>) => void;

/**
 * Keeps a worker's query executor limits in step with the `Service.Search.Executor.*` system
 * settings without a restart (docs/api.md, Settings). Every `intervalMs` it asks the master leader
 * (found through the coordinator) for the effective values; a change is applied at once and
 * announced to `onChange` listeners. Until the first answer, and whenever no leader answers, the
 * last applied values (initially the catalogue's defaults) stay in force.
 */
export class ExecutorSettingsPoller {
  private limits: Readonly<ExecutorLimits> = DEFAULT_EXECUTOR_LIMITS;
  private readonly listeners = new Set<ExecutorLimitsListener>();
  private readonly loop: MasterPollLoop;
  /** Polls failed in a row. The first few are normal (the master is still being elected). */
  private failuresInRow = 0;
  private readonly metrics = executorMetrics();

  constructor(
    coordinator: Coordinator,
    private readonly channels: ChannelPool,
    private readonly log: Logger,
    private readonly intervalMs = EXECUTOR_SETTINGS_POLL_MS,
  ) {
    this.publish();
    this.loop = new MasterPollLoop(
      coordinator,
      intervalMs,
      (endpoint) => this.poll(endpoint),
      (err) => this.failed(err),
    );
  }

  /** The limits in force now. */
  current(): Readonly<ExecutorLimits> {
    return this.limits;
  }

  /** Calls `listener` after every change of the applied limits; returns how to stop. */
  onChange(listener: ExecutorLimitsListener): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts polling: a first poll at once, then every `intervalMs`. */
  start(): void {
    this.loop.start();
  }

  /** Stops polling and waits for a poll in flight. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Polls once now (also used by tests); never throws. */
  pollNow(): Promise<void> {
    return this.loop.pollNow();
  }

  private async poll(endpoint: string): Promise<void> {
    const client = this.channels.client(SettingsServiceService, endpoint);
    const next = await client.getExecutorSettings({}, { timeoutMs: Math.max(500, this.intervalMs) });
    if (this.failuresInRow >= WARN_AFTER_FAILURES) this.log.info('executor settings reachable again');
    this.failuresInRow = 0;
    this.apply({
      queryMaxConcurrent: next.queryMaxConcurrent,
      fileMaxConcurrentRead: next.fileMaxConcurrentRead,
      rowgroupMaxConcurrentRead: next.rowgroupMaxConcurrentRead,
    });
  }

  private failed(err: unknown): void {
    this.metrics.pollFailures.inc();
    this.failuresInRow++;
    // An expected condition (no leader yet, a standby, a restart): its message, never a stack.
    const reason = err instanceof Error ? err.message : String(err);
    if (this.failuresInRow === WARN_AFTER_FAILURES)
      this.log.warn({ reason, limits: this.limits }, 'cannot read executor settings; keeping the applied limits');
    else this.log.debug({ reason }, 'executor settings poll failed');
  }

  private apply(next: ExecutorLimits): void {
    // A value below 1 would stop every query: the master never sends one, but never apply one.
    if (!(next.queryMaxConcurrent >= 1 && next.fileMaxConcurrentRead >= 1 && next.rowgroupMaxConcurrentRead >= 1)) return;
    const previous = this.limits;
    if (
      previous.queryMaxConcurrent === next.queryMaxConcurrent &&
      previous.fileMaxConcurrentRead === next.fileMaxConcurrentRead &&
      previous.rowgroupMaxConcurrentRead === next.rowgroupMaxConcurrentRead
    )
      return;
    this.limits = Object.freeze({ ...next });
    this.publish();
    this.log.info({ limits: this.limits, previous }, 'executor limits changed');
    for (const listener of this.listeners) {
      try {
        listener(this.limits, previous);
      } catch (err) {
        this.log.error(errorFields(err), 'executor limits listener failed');
      }
    }
  }

  private publish(): void {
    this.metrics.queryMaxConcurrent.set(this.limits.queryMaxConcurrent);
    this.metrics.fileMaxConcurrentRead.set(this.limits.fileMaxConcurrentRead);
    this.metrics.rowgroupMaxConcurrentRead.set(this.limits.rowgroupMaxConcurrentRead);
  }
}
