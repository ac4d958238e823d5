import { metricsRegistry } from '../metrics.js';
import type { RoleHandle } from '../role.js';

export interface OpsResponse {
  status: number;
  contentType: string;
  body: string;
}

/**
 * The operational endpoints every role serves: `/healthz` (the process is alive), `/readyz` (every
 * role of the process is ready; per-role detail in the body) and `/metrics` (Prometheus text).
 * Returns undefined for any other path.
 */
export async function opsResponse(path: string, roles: () => RoleHandle[]): Promise<OpsResponse | undefined> {
  switch (path) {
    case '/healthz':
      return { status: 200, contentType: 'application/json', body: JSON.stringify({ status: 'ok' }) };
    case '/readyz': {
      const detail = roles().map((r) => ({ role: r.name, ...r.readiness() }));
      const ready = detail.length > 0 && detail.every((d) => d.ready);
      return { status: ready ? 200 : 503, contentType: 'application/json', body: JSON.stringify({ ready, roles: detail }) };
    }
    case '/metrics': {
      const registry = metricsRegistry();
      return { status: 200, contentType: registry.contentType, body: await registry.metrics() };
    }
    default:
      return undefined;
  }
}
