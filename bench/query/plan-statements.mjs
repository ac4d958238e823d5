// Writes the statements the engine plans for the fixed query bench's queries (bench-cluster.mjs
// QUERIES): the one-worker whole-query statement and the fragment + merge statements with their
// parameters, with and without storage-applied time bounds, as JSON on stdout. Run it against two
// builds (a gateway dist given as the argument, default this tree's) and diff the outputs: a change
// that must not slow the fixed path must leave them byte-identical (decisions 0044, 0048).
//   npm run build && node bench/query/plan-statements.mjs > /tmp/branch.json
//   node bench/query/plan-statements.mjs /path/to/other/gateway/dist > /tmp/base.json && diff /tmp/base.json /tmp/branch.json
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { QUERIES, SCHEMA } from './bench-cluster.mjs';

const dist = path.resolve(process.argv[2] ?? new URL('../../gateway/dist', import.meta.url).pathname);
const { planQuery, warmQueryEngine } = await import(pathToFileURL(path.join(dist, 'src/query/engine.js')).href);
await warmQueryEngine();

const catalog = {
  tables: [
    {
      name: SCHEMA,
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'host', type: 'string' },
        { name: 'level', type: 'string' },
        { name: 'status', type: 'long' },
        { name: 'method', type: 'string' },
        { name: 'path', type: 'string' },
        { name: 'latencyMs', type: 'long' },
        { name: 'userId', type: 'string' },
        { name: 'message', type: 'string' },
      ],
    },
  ],
};
// A fixed now: ago() is folded into the statements' parameters.
const now = new Date(Date.UTC(2026, 10, 25, 12));
const bigints = (_k, v) => (typeof v === 'bigint' ? `${v}n` : v);
const out = {};
for (const q of QUERIES) {
  for (const storageTime of [false, true]) {
    const plan = planQuery(q.kql, catalog, { now, maxRows: 10_000, storageTime });
    out[`${q.name} (storageTime=${storageTime})`] = JSON.parse(JSON.stringify(plan, bigints));
  }
}
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
