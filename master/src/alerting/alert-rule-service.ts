import { randomUUID } from 'node:crypto';
import { invalid, isStrataError } from '@strata/common';
import type {
  AlertEvaluation,
  AlertRule,
  AlertRuleDefinition,
  ClaimedEvaluation,
  CompleteAlertEvaluationRequest,
} from '@strata/proto/alerting/v1/alert_rules';
import type { AlertService } from '../alerts/alert-service.js';
import { requireGuid } from '../incidents/incident-model.js';
import type { IncidentService } from '../incidents/incident-service.js';
import type { RelationalStore } from '../store/relational-store.js';
import { applyEvaluation, type LifecycleOutcome } from './alert-lifecycle.js';
import { evaluationRows, recordRows, ruleRows, type StoredRule } from './alert-rule-repository.js';

/** How long the evaluation log is kept per rule. */
export const EVALUATION_RETENTION_MS = 7 * 24 * 3600_000;
/** A claim outlives the rule's timeout by this much (the gateway's report travels too). */
const CLAIM_GRACE_MS = 30_000;
const MAX_CLAIMS = 64;

/** Rule status values (AlertRuleStatus.state). */
export const RULE_STATE = { pending: 'PENDING', ok: 'OK', error: 'ERROR' } as const;

/**
 * The tick an evaluation at `now` belongs to: ticks are aligned to multiples of the interval since
 * the epoch, so every leader computes the same tick for the same time, and after downtime the
 * current tick is the only one due (missed ticks are not replayed).
 */
export function currentTick(now: Date, intervalSeconds: number): string {
  const ms = intervalSeconds * 1000;
  return new Date(Math.floor(now.getTime() / ms) * ms).toISOString();
}

/**
 * Alert rules (CRUD), their scheduling (claims) and the application of evaluation outcomes. Runs
 * on the master leader; every write is one fenced store transaction.
 */
export class AlertRuleService {
  constructor(
    private readonly store: RelationalStore,
    private readonly incidents: IncidentService,
    private readonly alerts: AlertService,
    private readonly clock: () => Date,
  ) {}

  async list(accountId: string): Promise<AlertRule[]> {
    const a = requireGuid(accountId, 'accountId');
    return (await this.store.read((x) => ruleRows.list(x, a))).map((s) => s.rule);
  }

  async get(accountId: string, alertId: string): Promise<AlertRule | undefined> {
    const a = requireGuid(accountId, 'accountId');
    const id = requireGuid(alertId, 'alertId');
    return (await this.store.read((x) => ruleRows.get(x, a, id)))?.rule;
  }

  /** Creates or replaces a rule's definition (validated by the gateway); checks its incident owner. */
  async put(accountId: string, alertId: string, definition: AlertRuleDefinition, actorUserId: string) {
    const a = requireGuid(accountId, 'accountId');
    const id = requireGuid(alertId, 'alertId');
    if (!definition.name.trim() || !definition.query.trim()) throw invalid('An alert rule needs a name and a query.');
    if (definition.intervalSeconds < 1 || definition.resolveAfter < 1) throw invalid('Alert rule timing is out of range.');
    const owner = requireGuid(definition.ownerId, 'ownerId');
    return this.store.transaction(async (tx) => {
      await this.incidents.checkOwner(tx, a, definition.ownerType, owner);
      const now = this.clock().toISOString();
      const current = await ruleRows.get(tx, a, id);
      if (current) {
        const rule: AlertRule = { ...current.rule, definition, updatedAt: now };
        await ruleRows.updateDefinition(tx, rule);
        return { rule, created: false };
      }
      const rule: AlertRule = {
        accountId: a,
        alertId: id,
        definition,
        createdByUserId: actorUserId.toLowerCase(),
        createdAt: now,
        updatedAt: now,
        status: { state: RULE_STATE.pending, lastError: '', lastTickAt: '', lastEvaluatedAt: '' },
      };
      await ruleRows.insert(tx, rule);
      return { rule, created: true };
    });
  }

  async delete(accountId: string, alertId: string): Promise<boolean> {
    const a = requireGuid(accountId, 'accountId');
    const id = requireGuid(alertId, 'alertId');
    return this.store.transaction(async (tx) => {
      if (!(await ruleRows.get(tx, a, id))) return false;
      await ruleRows.delete(tx, a, id);
      return true;
    });
  }

  async records(accountId: string, alertId: string) {
    const a = requireGuid(accountId, 'accountId');
    const id = requireGuid(alertId, 'alertId');
    return this.store.read((x) => recordRows.list(x, a, id));
  }

  async evaluations(accountId: string, alertId: string, limit: number): Promise<AlertEvaluation[]> {
    const a = requireGuid(accountId, 'accountId');
    const id = requireGuid(alertId, 'alertId');
    return this.store.read((x) => evaluationRows.list(x, a, id, Math.min(Math.max(limit || 100, 1), 1000)));
  }

  /**
   * Hands out the evaluations due now: for each enabled rule whose current tick has not been
   * applied and that no unexpired claim holds, a claim on that tick. One fenced transaction, and
   * transactions are serialized, so two gateways asking at once never get the same rule and tick.
   * A claim whose gateway died expires after the rule's timeout plus a grace, and the tick (if it is
   * still current) is handed out again; the next tick supersedes it in any case.
   */
  async claim(max: number): Promise<ClaimedEvaluation[]> {
    const limit = Math.min(Math.max(max || 1, 1), MAX_CLAIMS);
    const isDue = ({ rule, claim }: StoredRule, now: Date): string | undefined => {
      const def = rule.definition!;
      if (!def.enabled) return undefined;
      const tickAt = currentTick(now, def.intervalSeconds);
      if (rule.status!.lastTickAt >= tickAt) return undefined;
      // A live claim holds its own tick only: once the next tick begins, a claim of an older tick
      // (its gateway died, or the leader that handed it out died before answering) is
      // superseded, so a failure costs at most one tick; the older report is then refused.
      if (claim && claim.expiresAt > now.toISOString() && claim.tickAt >= tickAt) return undefined;
      return tickAt;
    };
    // Every gateway asks every second: a read first, so that a poll with nothing due costs no
    // write transaction (and no fencing round trip to the coordinator).
    const peek = this.clock();
    if (!(await this.store.read((x) => ruleRows.all(x))).some((r) => isDue(r, peek))) return [];
    return this.store.transaction(async (tx) => {
      const now = this.clock();
      const claimed: ClaimedEvaluation[] = [];
      for (const stored of await ruleRows.all(tx)) {
        if (claimed.length >= limit) break;
        const tickAt = isDue(stored, now);
        if (!tickAt) continue;
        const { rule } = stored;
        const def = rule.definition!;
        const next = {
          token: randomUUID(),
          tickAt,
          expiresAt: new Date(now.getTime() + def.timeoutSeconds * 1000 + CLAIM_GRACE_MS).toISOString(),
          claimedAt: now.toISOString(),
        };
        await ruleRows.claim(tx, rule.accountId, rule.alertId, next);
        claimed.push({ rule, tickAt, claimToken: next.token });
      }
      return claimed;
    });
  }

  /**
   * Applies a claimed evaluation once: refused (applied = false) unless the claim is still this
   * rule's and its tick is newer than the last applied one. A failed query (or an outcome the
   * incident rules refuse, such as an owner group deleted since the rule was saved) puts the rule in
   * ERROR and changes no record: an evaluation that could not see the data resolves nothing.
   */
  async complete(req: CompleteAlertEvaluationRequest): Promise<{ applied: boolean; evaluation?: AlertEvaluation }> {
    const a = requireGuid(req.accountId, 'accountId');
    const id = requireGuid(req.alertId, 'alertId');
    const attempt = async (error: string) =>
      this.store.transaction(async (tx) => {
        const stored = await ruleRows.get(tx, a, id);
        if (!stored?.claim || stored.claim.token !== req.claimToken || stored.claim.tickAt !== req.tickAt)
          return { applied: false };
        if (stored.rule.status!.lastTickAt >= req.tickAt) return { applied: false };
        const now = this.clock().toISOString();
        let outcome: LifecycleOutcome = { fired: [], resolved: [] };
        if (!error)
          outcome = await applyEvaluation(tx, { incidents: this.incidents, alerts: this.alerts }, stored.rule, req.firing, now);
        const evaluation: AlertEvaluation = {
          accountId: a,
          alertId: id,
          tickAt: req.tickAt,
          evaluatedAt: now,
          claimedAt: stored.claim.claimedAt,
          durationMs: req.durationMs,
          rows: req.rows,
          firedRecordIds: outcome.fired,
          resolvedRecordIds: outcome.resolved,
          error,
        };
        await evaluationRows.insert(tx, evaluation, req.evaluator || 'unknown');
        await evaluationRows.prune(tx, a, id, new Date(Date.parse(now) - EVALUATION_RETENTION_MS).toISOString());
        await ruleRows.evaluated(tx, a, id, {
          tickAt: req.tickAt,
          evaluatedAt: now,
          status: error ? RULE_STATE.error : RULE_STATE.ok,
          ...(error ? { error } : {}),
        });
        return { applied: true, evaluation };
      });
    if (req.error) return attempt(req.error);
    try {
      return await attempt('');
    } catch (err) {
      // Only the rule's own data can be refused (kind 'invalid'); anything else (a lost
      // leadership, a store failure) is the caller's to retry while its claim lasts.
      if (!isStrataError(err) || err.kind !== 'invalid') throw err;
      return attempt(err.message);
    }
  }
}
