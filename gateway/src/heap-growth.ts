import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past its live size before the next full collection, in
 * percent (the limit is live × (1 + percent/100)).
 *
 * V8 picks the factor from how much of the time went to GC, between 1.1 and 4. The gateway's live
 * heap is ~75 MB (most of it the KQL language service) and inflow requests churn megabyte Buffers,
 * whose external memory starts collections too; each full collection marks the whole heap, so GC
 * took most of the CPU, the low mutator share shrank the factor to ~1.3 (limit 96 MB for 72 MB
 * live), and marking started again almost as soon as it ended: ~45 full collections per million
 * inflow rows. With 200 (limit ~3× live, ~225 MB here): 14, and the gateway's CPU for a million
 * rows fell from 7.0 to 3.4 s (decision 0028). The cost is a higher ceiling for garbage between
 * collections, not more live memory.
 */
export const GATEWAY_HEAP_GROWING_PERCENT = 200;

/** Applies GATEWAY_HEAP_GROWING_PERCENT to this process (V8 reads it at every limit computation). */
export function tuneGatewayHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${GATEWAY_HEAP_GROWING_PERCENT}`);
}
