// The entries both ingest benches send: realistic HTTP request logs, 11 data fields (~278 bytes
// of JSON each), deterministic in i.
const SERVICES = ['checkout', 'cart', 'search', 'auth', 'catalog', 'payments'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const LEVELS = ['info', 'info', 'info', 'info', 'warn', 'error'];
const STATUSES = [200, 200, 200, 201, 204, 304, 400, 404, 500];

/** Entry i, timestamped t0 + 3 ms · i. */
export function entry(i, t0) {
  const status = STATUSES[i % STATUSES.length];
  return {
    schema: 'Bench.Http',
    timestamp: new Date(t0 + i * 3).toISOString(),
    data: {
      host: `web-${String(i % 64).padStart(3, '0')}`,
      service: SERVICES[i % SERVICES.length],
      level: status >= 500 ? 'error' : LEVELS[i % LEVELS.length],
      method: METHODS[i % METHODS.length],
      path: `/api/v1/${SERVICES[(i >> 3) % SERVICES.length]}/${(i * 7919) % 100000}`,
      status,
      latencyMs: Math.round(((i * 37) % 5000) * 1.37) / 100,
      bytes: (i * 131) % 65536,
      userId: `u-${(i * 2654435761) % 1000003}`,
      traceId: ((i * 2654435761) >>> 0).toString(16).padStart(8, '0') + (i >>> 0).toString(16).padStart(8, '0'),
      success: status < 400,
    },
  };
}
