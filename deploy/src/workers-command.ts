import {
  type ClusterWorker,
  componentLogger,
  createCoordinator,
  createLogger,
  type DrainRecord,
  listClusterWorkers,
  type ResolvedConfig,
  requestWorkerDrain,
  StrataError,
} from '@strata/common';

export const WORKERS_USAGE = `  strata workers list --config FILE
                                 The workers (registered, draining, drained) with their ids.
  strata workers drain WORKER_ID --config FILE
                                 Drain a worker: it stops taking writes, hands its segments to
                                 the other workers and deregisters (docs/operations.md).
  strata workers status WORKER_ID --config FILE
                                 A drain's phase and progress (segments and bytes moved).
  strata workers rebalance --config FILE
                                 Even out existing segments over the workers (new workers get a
                                 share of the old data).
  strata workers rebalance-status --config FILE
                                 Each worker's part of the latest rebalance.
  strata workers forget WORKER_ID --config FILE
                                 Forget a finished drain, so that worker may rejoin (empty) when
                                 started again on its old volume.`;

export interface WorkersArgs {
  action: string | undefined;
  workerId?: string;
}

function progress(d: DrainRecord): string {
  const error = d.lastError ? `\tlast error: ${d.lastError}` : '';
  return `${d.phase}\t${d.segmentsMoved}/${d.segmentsTotal} segments\t${d.bytesMoved}/${d.bytesTotal} bytes${error}`;
}

function line(w: ClusterWorker): string {
  const state = !w.registered ? 'gone' : w.draining ? 'draining' : w.writable ? 'writable' : 'not writable';
  return `${w.workerId ?? '(no id)'}\t${w.endpoint ?? '-'}\t${state}\t${w.drain ? progress(w.drain) : '-'}`;
}

/**
 * `strata workers …`: the operator's view of the workers and the CLI way to drain one (the same
 * as `POST /cluster/workers/{id}/drain`). Talks to the coordinator of FILE's cluster directly.
 */
export async function workersCommand(config: ResolvedConfig, args: WorkersArgs, out: (line: string) => void): Promise<number> {
  if (!['list', 'rebalance', 'rebalance-status'].includes(args.action ?? '') && !args.workerId) {
    out(`workers ${args.action ?? ''} needs a WORKER_ID (see \`strata workers list\`)\n${WORKERS_USAGE}`);
    return 2;
  }
  const log = createLogger('cli', { level: 'warn' });
  const coordinator = await createCoordinator(config, componentLogger(log, 'coordinator'));
  try {
    if (args.action === 'list') {
      out('worker id\tendpoint\tstate\tdrain');
      for (const w of await listClusterWorkers(coordinator)) out(line(w));
      return 0;
    }
    if (args.action === 'rebalance') {
      const request = await coordinator.requestRebalance();
      out(`rebalance ${request.requestId} asked for; follow it with: strata workers rebalance-status --config FILE`);
      return 0;
    }
    if (args.action === 'rebalance-status') {
      const request = await coordinator.getRebalance();
      if (!request) {
        out('no rebalance was asked for');
        return 1;
      }
      out(`rebalance ${request.requestId} asked for at ${request.requestedAt}`);
      out('worker id\tphase\tsegments\tbytes');
      for (const p of (await coordinator.listRebalanceProgress()).filter((x) => x.requestId === request.requestId)) {
        const error = p.lastError ? `\tlast error: ${p.lastError}` : '';
        out(`${p.workerId}\t${p.phase}\t${p.segmentsMoved}/${p.segmentsTotal}\t${p.bytesMoved}/${p.bytesTotal}${error}`);
      }
      return 0;
    }
    if (args.action === 'drain') {
      try {
        const record = await requestWorkerDrain(coordinator, args.workerId!);
        out(`drain of worker ${args.workerId}: ${progress(record)}`);
        out(`follow it with: strata workers status ${args.workerId} --config FILE`);
        return 0;
      } catch (err) {
        if (err instanceof StrataError) {
          out(err.message);
          return 1;
        }
        throw err;
      }
    }
    if (args.action === 'status') {
      const record = await coordinator.getDrain(args.workerId!);
      if (!record) {
        out(`worker ${args.workerId} has no drain`);
        return 1;
      }
      out(progress(record));
      return 0;
    }
    if (args.action === 'forget') {
      const record = await coordinator.getDrain(args.workerId!);
      if (!record) {
        out(`worker ${args.workerId} has no drain`);
        return 1;
      }
      if (record.phase !== 'done') {
        out(`the drain of worker ${args.workerId} is not finished (${record.phase}); wait for it to finish`);
        return 1;
      }
      await coordinator.removeDrain(args.workerId!);
      out(`forgot the drain of worker ${args.workerId}`);
      return 0;
    }
    out(`unknown workers action: ${args.action ?? '(none)'}\n${WORKERS_USAGE}`);
    return 2;
  } finally {
    await coordinator.close();
  }
}
