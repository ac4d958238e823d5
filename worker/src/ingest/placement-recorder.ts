import { type Coordinator, errorFields, type Logger, StrataError } from '@strata/common';

/**
 * Records this worker as a holder of an account's data (a coordinator Placement) before the
 * worker acknowledges its first write for that account, so a query can tell "no data" from
 * "data on a worker that is down" (docs/decisions/0009-leadership-and-placement.md). One
 * coordinator write per account and worker lifetime; concurrent first writes share it.
 */
export class PlacementRecorder {
  private readonly recorded = new Map<string, Promise<void>>();
  private identity: { workerId: string; endpoint: string } | undefined;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly log: Logger,
  ) {}

  /** Set once the worker's endpoint is known (after its gRPC server bound its port). */
  identify(workerId: string, endpoint: string): void {
    this.identity = { workerId, endpoint };
  }

  /**
   * Resolves once this worker is recorded as a holder of `accountId`. Throws `unavailable` (the
   * write is then refused before anything is stored) when that cannot be recorded.
   */
  ensure(accountId: string): Promise<void> {
    let done = this.recorded.get(accountId);
    if (!done) {
      done = this.record(accountId);
      this.recorded.set(accountId, done);
      // A failure is not remembered: the next write tries again.
      done.catch(() => this.recorded.delete(accountId));
    }
    return done;
  }

  private async record(accountId: string): Promise<void> {
    const identity = this.identity;
    if (!identity) throw new StrataError('unavailable', 'The worker is starting.', { retryAfterSeconds: 1 });
    try {
      await this.coordinator.recordPlacement({ accountId, ...identity });
    } catch (err) {
      this.log.warn(
        { accountId, ...errorFields(err) },
        'could not record the placement of an account; refusing its writes for now',
      );
      throw new StrataError('unavailable', 'The worker cannot record where the data goes; nothing was stored.', {
        retryAfterSeconds: 2,
        cause: err,
      });
    }
  }
}
