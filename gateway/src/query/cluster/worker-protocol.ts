/**
 * The gateway's use of strata.query.v1: a planned fragment as an ExecuteFragment request (the wire
 * format itself, both directions, is common/src/query/fragment-wire.ts) and response batches as
 * column batches.
 */
import { type ColumnBatch, decodeBatch, encodeFragmentRequest, type FragmentView, StrataError } from '@strata/common';
import type { ExecuteFragmentRequest, ExecuteFragmentResponse } from '@strata/proto/query/v1/query';
import type { SingleWorkerSpec } from '../plan/planner.js';

/**
 * Inclusive µs bounds become the storage's milliseconds, from inclusive and to exclusive, widened
 * so no row inside the bounds is left out.
 */
export function scanRangeMs(timeRange: SingleWorkerSpec['timeRange']): { fromMs?: number; toMs?: number } {
  const out: { fromMs?: number; toMs?: number } = {};
  const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));
  if (timeRange.fromUs !== undefined) out.fromMs = Number(floorDiv(timeRange.fromUs, 1000n));
  if (timeRange.toUs !== undefined) out.toMs = Number(floorDiv(timeRange.toUs, 1000n)) + 1;
  return out;
}

/** A fragment's exact storage-applied bounds (FragmentSpec.storageTime) as the request's µs fields. */
export function storageTimeUs(fragment: SingleWorkerSpec): { fromUs?: number; toUs?: number } {
  const out: { fromUs?: number; toUs?: number } = {};
  const { fromUs, toUs } = fragment.storageTime ?? {};
  if (fromUs !== undefined) out.fromUs = Number(fromUs);
  if (toUs !== undefined) out.toUs = Number(toUs);
  for (const v of Object.values(out))
    if (!Number.isSafeInteger(v)) throw new StrataError('invalid', 'A time bound of the query is out of range.');
  return out;
}

export function fragmentRequest(accountId: string, fragment: SingleWorkerSpec, view?: FragmentView): ExecuteFragmentRequest {
  return encodeFragmentRequest(
    {
      accountId,
      schema: fragment.table,
      ...scanRangeMs(fragment.timeRange),
      ...storageTimeUs(fragment),
      ...(fragment.terms ? { terms: fragment.terms } : {}),
      ...(view ? { view } : {}),
    },
    {
      sql: fragment.sql,
      params: fragment.params,
      sourceColumns: fragment.sourceColumns,
      columns: fragment.columns,
      ...(fragment.limit !== undefined ? { maxRows: fragment.limit } : {}),
      ...(fragment.branchTopN ? { branchTopN: fragment.branchTopN } : {}),
      ...(fragment.branchLimit !== undefined ? { branchLimit: fragment.branchLimit } : {}),
    },
  );
}

export function responseBatch(message: ExecuteFragmentResponse, fragment: SingleWorkerSpec): ColumnBatch {
  return decodeBatch(
    message,
    fragment.columns.map((c) => c.type),
  );
}
