/**
 * The gateway's use of strata.query.v1: a planned fragment as an ExecuteFragment request (the wire
 * format itself, both directions, is common/src/query/fragment-wire.ts) and response batches as
 * column batches.
 */
import { type ColumnBatch, decodeBatch, encodeFragmentRequest, type FragmentView } from '@strata/common';
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

export function fragmentRequest(accountId: string, fragment: SingleWorkerSpec, view?: FragmentView): ExecuteFragmentRequest {
  return encodeFragmentRequest(
    { accountId, schema: fragment.table, ...scanRangeMs(fragment.timeRange), ...(view ? { view } : {}) },
    {
      sql: fragment.sql,
      params: fragment.params,
      sourceColumns: fragment.sourceColumns,
      columns: fragment.columns,
      ...(fragment.limit !== undefined ? { maxRows: fragment.limit } : {}),
    },
  );
}

export function responseBatch(message: ExecuteFragmentResponse, fragment: SingleWorkerSpec): ColumnBatch {
  return decodeBatch(
    message,
    fragment.columns.map((c) => c.type),
  );
}
