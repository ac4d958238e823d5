import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past its live size before the next full collection, in
 * percent (the limit is live × (1 + percent/100)); set by the gateway and the worker roles at
 * start (a process running both sets the same value).
 *
 * V8 picks the factor from how much of the time went to GC, between 1.1 and 4. Both roles churn
 * megabyte Buffers per inflow request (the body, the rows, the gRPC message and its TLS and HTTP/2
 * frames), whose external memory starts collections too, and each full collection marks the
 * whole heap:
 * - Gateway: live heap ~75 MB (most of it the KQL language service); GC took most of the CPU, the
 *   low mutator share shrank the factor to ~1.3 (limit 96 MB for 72 MB live), and marking started
 *   again almost as soon as it ended: ~45 full collections per million inflow rows. With 200
 *   (limit ~3× live): 14, and the gateway's CPU for a million rows fell from 7.0 to 3.4 s
 *   (decision 0028).
 * - Worker: live heap ~37 MB; ~35 full collections per million inflow rows ("GC in old space
 *   requested" as the received messages pile up), 7 with 200 (decision 0034).
 * The cost is a higher ceiling for garbage between collections, not more live memory.
 */
export const HEAP_GROWING_PERCENT = 200;

/** Applies HEAP_GROWING_PERCENT to this process (V8 reads it at every limit computation). */
export function tuneHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
