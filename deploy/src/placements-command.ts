import { componentLogger, createCoordinator, createLogger, type ResolvedConfig } from '@strata/common';

export const PLACEMENTS_USAGE = `  strata placements list --config FILE [--account ID]
                                 Which workers hold data of which account (from etcd), and
                                 whether each holder is registered now.
  strata placements write-off --config FILE --worker WORKER_ID
                                 Write a worker off (its volume is lost for good): the database
                                 leader restores its replicated segments from the other workers,
                                 then removes its placements, and queries answer without it
                                 instead of 503. Refused while that worker is registered; the
                                 worker id can never rejoin.`;

export interface PlacementsArgs {
  action: string | undefined;
  account?: string;
  worker?: string;
}

/**
 * `strata placements …`: the operator's view of placements and the one way to remove a holder
 * whose data is gone (docs/operations.md, "A worker lost for good"). Talks to the coordinator of
 * FILE's cluster (etcd.endpoints) directly; needs no running Strata process.
 */
export async function placementsCommand(
  config: ResolvedConfig,
  args: PlacementsArgs,
  out: (line: string) => void,
): Promise<number> {
  const log = createLogger('cli', { level: 'warn' });
  const coordinator = await createCoordinator(config, componentLogger(log, 'coordinator'));
  try {
    const workers = await coordinator.listWorkers();
    const registered = new Map(workers.flatMap((w) => (w.workerId ? [[w.workerId, w.endpoint] as const] : [])));
    if (args.action === 'list') {
      const placements = await coordinator.listPlacements(args.account);
      out('account\tworker id\tendpoint\tregistered\tsince');
      for (const p of placements) {
        out(
          `${p.accountId}\t${p.workerId}\t${p.endpoint}\t${registered.has(p.workerId) ? `yes (${registered.get(p.workerId)})` : 'no'}\t${p.since}`,
        );
      }
      return 0;
    }
    if (args.action === 'write-off') {
      if (!args.worker) {
        out('write-off needs --worker WORKER_ID (see `strata placements list`)');
        return 2;
      }
      if (registered.has(args.worker)) {
        out(
          `worker ${args.worker} is registered (${registered.get(args.worker)}): its data is not lost; drain it or stop it first`,
        );
        return 1;
      }
      if (args.account) {
        out('write-off is for a whole worker (its volume is lost); --account is not accepted');
        return 2;
      }
      const held = (await coordinator.listPlacements()).filter((p) => p.workerId === args.worker).length;
      // The leader's replica recovery promotes copies of its segments, then removes the placements.
      await coordinator.markLost(args.worker);
      out(
        `wrote off worker ${args.worker} (${held} placement(s)); the database leader restores its replicated segments and then removes its placements`,
      );
      return 0;
    }
    out(`unknown placements action: ${args.action ?? '(none)'}\n${PLACEMENTS_USAGE}`);
    return 2;
  } finally {
    await coordinator.close();
  }
}
