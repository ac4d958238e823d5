// What grpc-js alone costs a query fragment: one in-process server-streaming
// QueryService.ExecuteFragment call answering one message of N bytes (0 to 1 MB), through the
// same server and client helpers the roles use. Median of 300 calls per size. Then a one-row
// answer through other channel options and as a unary call, interleaved (channelVariants).
//
//   npx tsc -b tsconfig.build.json && node bench/query/grpc-cost.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@grpc/grpc-js';
import {
  CHANNEL_OPTIONS,
  ChannelPool,
  createLogger,
  implementService,
  loadInternalIdentity,
  ROLE_NAMES,
  startGrpcServer,
} from '@strata/common';
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
  termHints: [],
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
  await channelVariants();
} finally {
  channels.close();
  server.forceShutdown();
}

/**
 * A one-row answer (8 bytes) through channels with other options and as a unary call, interleaved
 * call by call (decision 0032: whether grpc-js settings change a small query's call): the roles'
 * CHANNEL_OPTIONS; retries off ('grpc.enable_retries': 0, which skips grpc-js' retry layer);
 * also without keepalive pings; and a unary call (ListSchemas) instead of a server stream.
 */
async function channelVariants() {
  payload = Buffer.alloc(8, 1);
  const endpoint = `127.0.0.1:${port}`;
  const credentials = identity.channelCredentials('backend');
  const retriesOff = { ...CHANNEL_OPTIONS, 'grpc.enable_retries': 0 };
  const variants = {
    'stream, CHANNEL_OPTIONS': CHANNEL_OPTIONS,
    'stream, retries off': retriesOff,
    'stream, retries and keepalive off': Object.fromEntries(
      Object.entries(retriesOff).filter(([k]) => !k.startsWith('grpc.keepalive')),
    ),
  };
  const clients = Object.entries(variants).map(([name, options]) => [name, new Client(endpoint, credentials, options)]);
  const stream = (client) => async () => {
    const def = QueryServiceService.executeFragment;
    const call = client.makeServerStreamRequest(def.path, def.requestSerialize, def.responseDeserialize, request, undefined, {
      deadline: Date.now() + 10_000,
    });
    for await (const message of call) void message;
  };
  const unary = (client) => () =>
    new Promise((resolve, reject) => {
      const def = QueryServiceService.listSchemas;
      client.makeUnaryRequest(
        def.path,
        def.requestSerialize,
        def.responseDeserialize,
        { accountId: 'a' },
        { deadline: Date.now() + 10_000 },
        (e, r) => (e ? reject(e) : resolve(r)),
      );
    });
  const cases = [...clients.map(([name, client]) => [name, stream(client)]), ['unary, CHANNEL_OPTIONS', unary(clients[0][1])]];
  const times = cases.map(() => []);
  for (let r = 0; r < 2000; r++)
    for (const [i, [, run]] of cases.entries()) {
      const t = performance.now();
      await run();
      if (r >= 200) times[i].push(performance.now() - t);
    }
  for (const [i, [name]] of cases.entries()) {
    const sorted = times[i].sort((a, b) => a - b);
    const at = (f) => sorted[Math.floor(f * (sorted.length - 1))].toFixed(3);
    console.log(`${name.padEnd(36)} ${at(0.5)} ms a call (quartiles ${at(0.25)}–${at(0.75)})`);
  }
  for (const [, client] of clients) client.close();
}
