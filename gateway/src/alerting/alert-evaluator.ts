import { hostname } from 'node:os';
import { Counter, errorFields, type Logger, metricsRegistry } from '@strata/common';
import {
  AlertRuleServiceService,
  type ClaimedEvaluation,
  type CompleteAlertEvaluationRequest,
} from '@strata/proto/alerting/v1/alert_rules';
import type { MasterClient } from '../master-client.js';
import type { QueryService } from '../query/query-service.js';
import { evaluateRule } from './alert-evaluation.js';

/** How often a gateway asks the leader for due evaluations: a tick runs at most this late. */
const POLL_MS = 1000;
/** Evaluations one gateway runs at once. */
const MAX_CONCURRENT = 4;
/** Pause between attempts to report an outcome, and the leader's claim grace (alert-rule-service.ts). */
const REPORT_RETRY_MS = 1000;
const REPORT_GRACE_SECONDS = 30;
const WARN_EVERY_MS = 60_000;

let evaluationsCounter: Counter<'outcome'> | undefined;
/** strata_alert_evaluations_total{outcome}: ok, error (the query failed), stale (report refused), unreported. */
function evaluationsMetric(): Counter<'outcome'> {
  evaluationsCounter ??= new Counter({
    name: 'strata_alert_evaluations_total',
    help: 'Alert rule evaluations run by this gateway, by outcome (ok, error, stale, unreported).',
    labelNames: ['outcome'],
    registers: [metricsRegistry()],
  });
  return evaluationsCounter;
}

/**
 * The gateway's part of alert evaluation (docs/decisions/0013-alert-evaluation.md): asks the
 * master leader for the evaluations due now, runs each rule's query through this gateway's query
 * service and reports the outcome, which the leader applies once. The gateway decides nothing:
 * which tick is due, who runs it and whether its outcome still counts are the leader's.
 */
export class AlertEvaluator {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private stopped = false;
  private warnedAt = 0;
  private readonly name = `${hostname()}:${process.pid}`;

  constructor(
    private readonly master: MasterClient,
    private readonly query: QueryService,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.cycle().finally(() => this.schedule()), POLL_MS);
    this.timer.unref();
  }

  /** One poll: claim what is due and evaluate it. Resolves when every claimed evaluation reported. */
  async cycle(): Promise<void> {
    // Not gated on `master.leaderEndpoint`: the client finds the leader itself on each call, while
    // its cached endpoint may stay empty after a failover until the next election change.
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      const service = this.master.service(AlertRuleServiceService);
      const { evaluations } = await service.claimAlertEvaluations({ evaluator: this.name, max: MAX_CONCURRENT });
      if (evaluations.length > 0)
        this.log.debug(
          { claimed: evaluations.map((e) => ({ alertId: e.rule!.alertId, tickAt: e.tickAt })) },
          'claimed alert evaluations',
        );
      await Promise.all(evaluations.map((e) => this.evaluate(e)));
    } catch (err) {
      // Polls fail every second while no leader is elected: say so once a minute.
      if (Date.now() - this.warnedAt > WARN_EVERY_MS) {
        this.warnedAt = Date.now();
        this.log.warn(errorFields(err), 'alert evaluation cycle failed; retrying on the next poll');
      }
    } finally {
      this.running = false;
    }
  }

  private async evaluate(claimed: ClaimedEvaluation): Promise<void> {
    const claimedAt = Date.now();
    const rule = claimed.rule!;
    const base = {
      accountId: rule.accountId,
      alertId: rule.alertId,
      tickAt: claimed.tickAt,
      claimToken: claimed.claimToken,
      evaluator: this.name,
    };
    let report: CompleteAlertEvaluationRequest;
    const started = performance.now();
    try {
      const result = await evaluateRule(this.query, rule.accountId, rule.definition!, new Date(claimed.tickAt));
      report = { ...base, durationMs: result.durationMs, rows: result.rows, firing: result.firing, error: '' };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      report = {
        ...base,
        durationMs: Math.round(performance.now() - started),
        rows: 0,
        firing: [],
        error: message || 'The query failed.',
      };
    }
    // The report is retried while the claim lasts (the rule's timeout plus the leader's 30 s
    // grace, counted from the claim): a master failover in the middle of an evaluation delays
    // the report to the new leader, which applies it, instead of losing the tick.
    const retryUntil = claimedAt + (rule.definition!.timeoutSeconds + REPORT_GRACE_SECONDS) * 1000;
    for (let attempt = 0; ; attempt++) {
      try {
        const { applied } = await this.master.service(AlertRuleServiceService).completeAlertEvaluation(report);
        evaluationsMetric().inc({ outcome: !applied ? 'stale' : report.error ? 'error' : 'ok' });
        if (!applied)
          this.log.info({ alertId: rule.alertId, tickAt: claimed.tickAt }, 'alert evaluation report was stale; not applied');
        return;
      } catch (err) {
        if (this.stopped || Date.now() + REPORT_RETRY_MS > retryUntil) {
          // The claim expires and the tick, if still current, is handed out again.
          evaluationsMetric().inc({ outcome: 'unreported' });
          this.log.warn(
            { alertId: rule.alertId, tickAt: claimed.tickAt, ...errorFields(err) },
            'could not report an alert evaluation',
          );
          return;
        }
        if (attempt === 0)
          this.log.info({ alertId: rule.alertId, ...errorFields(err) }, 'alert evaluation report failed; retrying');
        await new Promise((r) => setTimeout(r, REPORT_RETRY_MS));
      }
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
