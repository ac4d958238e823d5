import type { Lease, Namespace } from 'etcd3';
import { StrataError } from '../errors.js';
import { errorFields, type Logger } from '../logging.js';
import { backoffDelay } from './backoff.js';
import type { WorkerLease, WorkerRegistration } from './coordinator.js';

/**
 * A worker's registration: a JSON value under `<prefix>/workers/<endpoint>` attached to an etcd
 * lease of the coordinator's TTL, kept alive by etcd3. When the lease is lost (etcd unreachable
 * for too long, or revoked by someone else) the registration is written again under a new lease,
 * retrying with backoff until it succeeds or the worker revokes.
 */
export class EtcdWorkerLease implements WorkerLease {
  private lease: Lease | undefined;
  private revoked = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  /** True while attach() runs: its own failure schedules the retry, not the lease's 'lost'. */
  private attaching = false;

  private constructor(
    private readonly namespace: Namespace,
    private readonly key: string,
    private current: WorkerRegistration,
    private readonly ttlSeconds: number,
    private readonly log: Logger,
    private readonly onRevoked: (lease: EtcdWorkerLease) => void,
  ) {}

  /** Registers and resolves once the registration is stored; rejects if etcd refuses. */
  static async register(
    namespace: Namespace,
    key: string,
    registration: Omit<WorkerRegistration, 'updatedAt'>,
    ttlSeconds: number,
    log: Logger,
    onRevoked: (lease: EtcdWorkerLease) => void,
  ): Promise<EtcdWorkerLease> {
    const current = { ...registration, updatedAt: new Date().toISOString() };
    const workerLease = new EtcdWorkerLease(namespace, key, current, ttlSeconds, log, onRevoked);
    await workerLease.attach();
    return workerLease;
  }

  async update(change: Partial<Pick<WorkerRegistration, 'freeBytes' | 'writable' | 'draining' | 'segmentBytes'>>): Promise<void> {
    if (this.revoked) throw new StrataError('unavailable', `worker lease of ${this.current.endpoint} is revoked`);
    const next = { ...this.current, updatedAt: new Date().toISOString() };
    if (change.freeBytes !== undefined) next.freeBytes = change.freeBytes;
    if (change.writable !== undefined) next.writable = change.writable;
    if (change.draining !== undefined) next.draining = change.draining;
    if (change.segmentBytes !== undefined) next.segmentBytes = change.segmentBytes;
    this.current = next;
    // While a lost lease is being replaced, the re-registration writes `current`.
    const lease = this.lease;
    if (lease && !lease.revoked()) await lease.put(this.key).value(JSON.stringify(next)).exec();
  }

  async revoke(): Promise<void> {
    if (this.revoked) return;
    this.revoked = true;
    clearTimeout(this.retryTimer);
    const lease = this.lease;
    this.lease = undefined;
    this.onRevoked(this);
    // Revoking deletes the key only if it is still attached to this lease, so a newer
    // registration of the same endpoint survives.
    await lease?.revoke();
  }

  /** Grants a lease and writes the registration under it. */
  private async attach(): Promise<void> {
    const lease = this.namespace.lease(this.ttlSeconds);
    // Listen before anything can fail: an unhandled 'lost' would be an uncaught error.
    lease.on('lost', (err) => {
      if (this.lease !== lease || this.revoked || this.attaching) return;
      this.log.warn({ ...errorFields(err), endpoint: this.current.endpoint }, 'worker lease lost; registering again');
      this.lease = undefined;
      this.scheduleReattach();
    });
    this.lease = lease;
    this.attaching = true;
    try {
      await lease.put(this.key).value(JSON.stringify(this.current)).exec();
    } catch (err) {
      if (this.lease === lease) this.lease = undefined;
      void lease.revoke().catch(() => undefined);
      throw err;
    } finally {
      this.attaching = false;
    }
    if (this.revoked) await lease.revoke().catch(() => undefined);
  }

  private scheduleReattach(): void {
    if (this.revoked) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(
      () => {
        if (this.revoked) return;
        this.attach().then(
          () => {
            this.failures = 0;
            this.log.info({ endpoint: this.current.endpoint }, 'worker registered again');
          },
          (err) => {
            this.log.warn({ ...errorFields(err), endpoint: this.current.endpoint }, 'worker re-registration failed');
            this.scheduleReattach();
          },
        );
      },
      backoffDelay(this.failures++),
    );
  }
}
