import { createServer, type Server } from 'node:http';
import { opsResponse, type RoleHandle } from '@strata/common';

/** Serves /healthz, /readyz and /metrics for the roles of this process on `ops.host:ops.port`. */
export async function startOpsServer(
  host: string,
  port: number,
  roles: () => RoleHandle[],
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    opsResponse(path, roles).then(
      (r) => {
        if (!r || req.method !== 'GET') {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not found.' }));
          return;
        }
        res.writeHead(r.status, { 'content-type': r.contentType }).end(r.body);
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : port };
}
