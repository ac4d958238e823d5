/**
 * The longest a query may run, whoever asks: the gateway caps a token's `queryTimeoutSeconds` at
 * it, and a worker stops any fragment at it even when the caller set no deadline (a direct gRPC
 * call, or a gateway of an older version), so one request cannot hold a worker's cores longer.
 */
export const MAX_QUERY_SECONDS = 300;

/** The answer when a query's budget runs out (docs/api.md, Query budget). */
export function queryTimeoutMessage(seconds: number): string {
  return `The query did not finish within ${seconds} seconds.`;
}
