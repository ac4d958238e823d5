// What grpc-js alone costs a query fragment: one in-process server-streaming
// QueryService.ExecuteFragment call answering one message of N bytes (0 to 1 MB), through the
// same server and client helpers the roles use. Median of 300 calls per size.
//
//   npx tsc -b tsconfig.build.json && node bench/query/grpc-cost.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ChannelPool, createLogger, implementService, loadInternalIdentity, ROLE_NAMES, startGrpcServer } from '@strata/common';
import { QueryServiceService } from '@strata/proto/query/v1/query';

const SIZES = [0, 10_000, 100_000, 300_000, 1_000_000];
const EMPTY = Buffer.alloc(0);
let payload = EMPTY;
const implementation = implementService(
  QueryServiceService,
  {
    executeFragment: async (_req, send) => {
      if (payload.length === 0) return;
      const column = {
        nulls: EMPTY,
        int64Values: payload,
        doubleValues: EMPTY,
        boolValues: EMPTY,
        stringData: EMPTY,
        stringOffsets: EMPTY,
      };
      await send({ rowCount: 1, columns: [column] });
    },
    listSchemas: async () => ({ schemas: [] }),
  },
  createLogger('grpc-cost', { level: 'warn' }),
);
// Mutual TLS as between deployed roles: the figures include what authenticated transport costs.
const tlsDir = mkdtempSync(path.join(tmpdir(), 'grpc-cost-tls-'));
process.once('exit', () => rmSync(tlsDir, { recursive: true, force: true }));
const identity = loadInternalIdentity({ generateDir: tlsDir, refreshIntervalSeconds: 60 }, ROLE_NAMES);
const { server, port } = await startGrpcServer('127.0.0.1:0', [{ definition: QueryServiceService, implementation }], identity);
const channels = new ChannelPool(identity);
const client = channels.client(QueryServiceService, `127.0.0.1:${port}`);
const request = {
  accountId: 'a',
  schema: 's',
  sql: 'WITH x',
  params: [],
  sourceColumns: [],
  columns: [],
  viewRevision: 0,
  segmentOwners: [],
};
try {
  for (const size of SIZES) {
    payload = size === 0 ? EMPTY : Buffer.alloc(size, 7);
    const times = [];
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      for await (const message of client.executeFragment(request, { timeoutMs: 10_000 })) void message;
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(`${String(size).padStart(9)} bytes: ${times[150].toFixed(3)} ms a call`);
  }
} finally {
  channels.close();
  server.forceShutdown();
}
