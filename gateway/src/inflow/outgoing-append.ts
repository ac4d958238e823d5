import { AppendRequest } from '@strata/proto/ingest/v1/ingest';
import type { WrittenSchema } from '../query/cluster/schema-catalog.js';

/**
 * An inflow batch on its way to a worker (worker-router.ts), made by the route in the same
 * synchronous step that built the rows, so that only what the router needs survives the wait for
 * the worker's answer.
 *
 * An unkeyed batch is encoded here, once: the same bytes go to every worker the router tries, and
 * the parts' megabyte rows Buffers die young. Kept across the wait (tens of ms), they were promoted
 * to the old generation and counted as external memory until a full collection, and V8 starts one
 * whenever external memory has grown 64 MB since the last: every ~20 one-megabyte requests, each
 * marking the gateway's whole heap (decision 0039; measured in docs/decisions/0047-ingest-part-4.md).
 *
 * A keyed batch keeps its request: each attempt carries the key view's revision it was routed by
 * (`keyViewRevision`, decision 0029), and its previous owners are asked about its key first.
 */
export type OutgoingAppend =
  | { readonly keyed: false; readonly encoded: Buffer; readonly written: WrittenSchema[] }
  | { readonly keyed: true; readonly request: AppendRequest; readonly written: WrittenSchema[] };

export function outgoingAppend(request: AppendRequest): OutgoingAppend {
  // Schemas and column names only (for the schema catalog's noteWritten), not the rows.
  const written = request.parts.map((p) => ({ schema: p.schema, columns: p.columns.map((c) => ({ name: c.name })) }));
  if (request.idempotencyKey !== '') return { keyed: true, request, written };
  const bytes = AppendRequest.encode(request).finish();
  // The Writer's own array, as a Buffer without a copy (grpc-js wants a Buffer).
  return { keyed: false, encoded: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), written };
}
