import type { Placement, WorkerRegistration } from './coordinator.js';

/** Placements in a stable order: by account, then worker id. */
export function sortPlacements(list: Placement[]): Placement[] {
  return list.sort((a, b) =>
    a.accountId === b.accountId ? a.workerId.localeCompare(b.workerId) : a.accountId.localeCompare(b.accountId),
  );
}

/** What a query over one account can reach of the workers that hold its data. */
export interface Coverage {
  /** Registered workers: every one is asked (a worker that holds nothing of the account answers nothing). */
  reachable: WorkerRegistration[];
  /** Holders of the account's data that are not registered (down, stopped, or their volume replaced). */
  missing: Placement[];
}

/**
 * Compares an account's placements with the registered workers. A placement is covered by the
 * registered worker with the same `workerId`: a worker that came back on a fresh data directory
 * has a new id and does not cover the data its predecessor held.
 */
export function coverageOf(placements: Placement[], workers: WorkerRegistration[]): Coverage {
  const registered = new Set(workers.map((w) => w.workerId).filter((id): id is string => id !== undefined));
  return { reachable: workers, missing: placements.filter((p) => !registered.has(p.workerId)) };
}
