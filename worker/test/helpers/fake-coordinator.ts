import type { Candidacy, Coordinator, LeaderInfo, WorkerLease, WorkerRegistration } from '@strata/common';

/**
 * An in-test stand-in for the coordinator's worker registry (the embedded coordinator is built
 * by someone else). Records registrations so tests can read what a worker published.
 */
export class FakeCoordinator implements Coordinator {
  readonly workers = new Map<string, WorkerRegistration>();
  private readonly watchers = new Set<(w: WorkerRegistration[]) => void>();

  async campaign(): Promise<Candidacy> {
    throw new Error('FakeCoordinator: campaign is not supported');
  }
  async getLeader(): Promise<LeaderInfo | undefined> {
    return undefined;
  }
  observeLeader(_e: string, callback: (leader: LeaderInfo | undefined) => void) {
    callback(undefined);
    return () => undefined;
  }
  async registerWorker(registration: Omit<WorkerRegistration, 'updatedAt'>): Promise<WorkerLease> {
    const endpoint = registration.endpoint;
    this.workers.set(endpoint, { ...registration, updatedAt: new Date().toISOString() });
    this.notify();
    return {
      update: async (change) => {
        const current = this.workers.get(endpoint);
        if (!current) return;
        this.workers.set(endpoint, { ...current, ...change, updatedAt: new Date().toISOString() });
        this.notify();
      },
      revoke: async () => {
        this.workers.delete(endpoint);
        this.notify();
      },
    };
  }
  async listWorkers(): Promise<WorkerRegistration[]> {
    return [...this.workers.values()];
  }
  watchWorkers(callback: (w: WorkerRegistration[]) => void) {
    this.watchers.add(callback);
    callback([...this.workers.values()]);
    return () => this.watchers.delete(callback);
  }
  async close(): Promise<void> {
    this.workers.clear();
  }
  private notify() {
    for (const w of this.watchers) w([...this.workers.values()]);
  }
}
