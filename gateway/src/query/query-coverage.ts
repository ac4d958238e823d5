/**
 * Which workers one query (or schema listing) must hear from, and what it left out.
 *
 * The workers that hold an account's data are known from its placements (coordinator; written by
 * a worker before it acknowledges its first write for the account). A request is answered only
 * when every holder answered, or — when the caller asked for it with `allowPartial` — with the
 * holders that did not answer listed, so an answer never silently misses data
 * (docs/decisions/0009-leadership-and-placement.md). Registered workers that hold nothing of the
 * account are still asked (they answer nothing), and their failure does not matter.
 */
import {
  type AccountView,
  type Coordinator,
  coverageOf,
  type FragmentView,
  type Placement,
  StrataError,
  type WorkerRegistration,
} from '@strata/common';

/** A holder the answer is missing. */
export interface MissingWorker {
  endpoint: string;
  workerId: string;
}

export class QueryCoverage {
  private readonly left = new Map<string, MissingWorker>();

  private constructor(
    /** The registered workers to ask. */
    readonly workers: WorkerRegistration[],
    private readonly holders: Set<string>,
    readonly allowPartial: boolean,
    /**
     * The coordinator revision of the read and the owners of segments handed between workers:
     * every fragment of the query carries it, so each such segment is read exactly once
     * (docs/decisions/0016-drain-and-replication.md).
     */
    readonly view: FragmentView,
  ) {}

  /**
   * Reads the account's placements and the registered workers once for the request. Throws 503
   * naming the holders that are not registered, unless `allowPartial`.
   */
  static async resolve(coordinator: Coordinator, accountId: string, allowPartial: boolean): Promise<QueryCoverage> {
    // One read at one revision: workers, placements and handoffs agree with each other.
    return QueryCoverage.fromView(await coordinator.readAccountView(accountId), allowPartial);
  }

  /** The coverage an account view gives (see resolve). */
  static fromView(accountView: AccountView, allowPartial: boolean): QueryCoverage {
    const { placements, workers, handoffs, revision } = accountView;
    const { reachable, missing } = coverageOf(placements, workers);
    const view: FragmentView = {
      revision,
      owners: handoffs.map((h) => ({ segmentId: h.segmentId, workerId: h.toWorkerId })),
    };
    const coverage = new QueryCoverage(reachable, new Set(placements.map((p) => p.workerId)), allowPartial, view);
    coverage.viewKey = viewKey(accountView);
    for (const p of missing) coverage.noteMissing(p);
    coverage.check();
    return coverage;
  }

  /**
   * Whether a query run with this coverage sends the same requests to the same workers and
   * judges their failures alike as one run with `other` (decision 0027): the same workers asked
   * (endpoint, id, whether their scans apply time bounds), the same holders and the same segment
   * owners. Only the view's revision may differ: a worker that accepted the older revision
   * accepts the newer one too (it refuses only revisions older than a handoff it let go of).
   */
  sameView(other: QueryCoverage): boolean {
    return this.viewKey === other.viewKey;
  }

  /** See sameView; set by fromView. */
  private viewKey = '';

  /** Holders left out of the answer so far (only ever non-empty with allowPartial). */
  get missing(): MissingWorker[] {
    return [...this.left.values()].sort((a, b) => a.endpoint.localeCompare(b.endpoint));
  }

  /**
   * A worker failed to answer with `err`. Returns normally when the answer may go on without it
   * (it holds nothing of the account, or partial answers are allowed: then it is listed as
   * missing); throws the 503 to answer otherwise.
   */
  workerFailed(worker: WorkerRegistration, err: StrataError): void {
    if (worker.workerId === undefined || !this.holders.has(worker.workerId)) {
      if (err.kind === 'unavailable') return;
      throw new StrataError('unavailable', `Worker ${worker.endpoint} could not run the query: ${err.message}`, {
        cause: err,
        retryAfterSeconds: 5,
      });
    }
    this.noteMissing({ endpoint: worker.endpoint, workerId: worker.workerId });
    this.check();
  }

  private noteMissing(p: Pick<Placement, 'endpoint' | 'workerId'>): void {
    this.left.set(p.workerId, { endpoint: p.endpoint, workerId: p.workerId });
  }

  private check(): void {
    if (this.allowPartial || this.left.size === 0) return;
    throw missingHoldersError(this.missing);
  }
}

/** What of an account view decides what a query asks and of whom (QueryCoverage.sameView). */
function viewKey(view: AccountView): string {
  const workers = view.workers
    .map((w) => [w.endpoint, w.workerId ?? '', w.scanTimeBounds === true])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  const holders = view.placements.map((p) => [p.workerId, p.endpoint]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  const owners = view.handoffs.map((h) => [h.segmentId, h.toWorkerId]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return JSON.stringify([workers, holders, owners]);
}

/** 503 naming the holders that cannot be reached, with one `errors[]` item each. */
export function missingHoldersError(missing: MissingWorker[]): StrataError {
  const names = missing.map((m) => m.endpoint).join(', ');
  return new StrataError(
    'unavailable',
    `Workers holding data of this account cannot be reached: ${names}. The answer would be incomplete; retry later, or send "allowPartial": true to get the answer without their data.`,
    {
      retryAfterSeconds: 5,
      details: missing.map((m) => ({ message: `worker ${m.endpoint} (id ${m.workerId}) is unavailable`, tokens: [] })),
    },
  );
}
