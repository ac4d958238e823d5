import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * How many cores this worker may use: DuckDB's thread count follows it (queries use up to this
 * many, ingest one fewer). `backend.cores` when configured; otherwise the container's CPU limit
 * when cgroup v2 sets one (`cpu.max` "quota period", rounded up), else every core of the host.
 *
 * Why: DuckDB defaults to one thread per host core. Several workers on one host (or a pod limited
 * to 1 CPU on a 16-core node) then run more threads than they have cores, and the threads contend:
 * measured with two workers on this 2-core machine, a top-10 query took 1.56× the single-instance
 * time with 2 threads each, 1.09× with 1 each (bench/query/query-bench.mjs).
 */
export function workerCores(configured?: number, cgroupCpuMax = '/sys/fs/cgroup/cpu.max'): number {
  const host = availableParallelism();
  if (configured !== undefined) return Math.max(1, Math.min(configured, host));
  return Math.max(1, Math.min(cgroupCores(cgroupCpuMax) ?? host, host));
}

function cgroupCores(file: string): number | undefined {
  try {
    const [quota, period] = readFileSync(file, 'utf8').trim().split(/\s+/);
    if (quota === undefined || quota === 'max' || period === undefined) return undefined;
    const q = Number(quota);
    const p = Number(period);
    return q > 0 && p > 0 ? Math.ceil(q / p) : undefined;
  } catch {
    return undefined; // no cgroup v2 limit visible: the host's cores
  }
}
