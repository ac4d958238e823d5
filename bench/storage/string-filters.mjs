// What a string filter's statement costs alone, in the worker's DuckDB, form against form
// (decision 0033): bench/query's rows (1 M by default) are loaded and sealed into one worker, the
// planner's statement for each string-filter query is printed, and then, interleaved on one scan
// of all the rows, each query's hand-written forms (the form before the change, the forms tried,
// the planner's form now) with their median, min and max over --runs, and the machine's load.
//
//   npm run build && node bench/storage/string-filters.mjs [--rows 1000000] [--runs 7] [--match timeout]
//
// Data goes to .bench-data/ and is removed at the end.
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { fragmentSql, inlineParams, runFragment } from '@strata/common';
import { planQuery, SchemaCatalogSource } from '@strata/gateway';
import { scanRangeMs, storageTimeUs } from '../../gateway/dist/src/query/cluster/worker-protocol.js';
import { ACCOUNT, DATA, loadRows, SCHEMA, startCluster } from '../query/bench-cluster.mjs';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '7' },
    match: { type: 'string', default: '' },
  },
});
const ROWS = Number(args.rows);
const RUNS = Number(args.runs);

const TERM = (needle) => `'(?i)(?:^|[^\\p{L}\\p{N}])${needle}(?:[^\\p{L}\\p{N}]|$)'`;
const count = (pred) => (rel) => `SELECT count(*) FROM ${rel} WHERE ${pred}`;
const take = (pred) => (rel) => `SELECT * FROM ${rel} WHERE ${pred} LIMIT 100`;

/** Per query: its KQL (for the planner's statement) and the forms timed against each other. */
const CASES = [
  {
    name: 'has "timeout"',
    kql: `${SCHEMA} | where message has "timeout" | count`,
    forms: {
      'regex alone': count(`regexp_matches(message, ${TERM('timeout')})`),
      'contains(lower()) AND regex (before = now)': count(
        `contains(lower(message), 'timeout') AND regexp_matches(message, ${TERM('timeout')})`,
      ),
      'ilike AND regex': count(`message ILIKE '%timeout%' AND regexp_matches(message, ${TERM('timeout')})`),
      'regex (?i) literal AND regex': count(
        `regexp_matches(message, '(?i)timeout') AND regexp_matches(message, ${TERM('timeout')})`,
      ),
      'contains(lower()) alone': count(`contains(lower(message), 'timeout')`),
      'ilike alone': count(`message ILIKE '%timeout%'`),
      'contains cs alone': count(`contains(message, 'timeout')`),
      'decode only (strlen > 0)': count('strlen(message) > 0'),
    },
  },
  {
    name: 'has "2179ms"',
    kql: `${SCHEMA} | where message has "2179ms" | count`,
    forms: {
      'regex alone (before)': count(`regexp_matches(message, ${TERM('2179ms')})`),
      'contains "2179" AND regex': count(`contains(message, '2179') AND regexp_matches(message, ${TERM('2179ms')})`),
      'decode only (strlen > 0)': count('strlen(message) > 0'),
      'contains(lower()) "2179m" AND regex': count(
        `contains(lower(message), '2179m') AND regexp_matches(message, ${TERM('2179ms')})`,
      ),
    },
  },
  {
    name: 'has "deadlock"',
    kql: `${SCHEMA} | where message has "deadlock" | count`,
    forms: {
      'regex alone': count(`regexp_matches(message, ${TERM('deadlock')})`),
      'contains(lower()) "deadlo" AND regex': count(
        `contains(lower(message), 'deadlo') AND regexp_matches(message, ${TERM('deadlock')})`,
      ),
      'ilike "deadlo" AND regex': count(`message ILIKE '%deadlo%' AND regexp_matches(message, ${TERM('deadlock')})`),
    },
  },
  {
    name: 'contains "db-3" + take 100',
    kql: `${SCHEMA} | where message contains "db-3" | take 100`,
    forms: {
      'contains(lower()) (before)': take(`contains(lower(message), lower('db-3'))`),
      'contains cs "-3" AND contains(lower())': take(`contains(message, '-3') AND contains(lower(message), 'db-3')`),
      ilike: take(`message ILIKE '%db-3%'`),
      'count contains(lower())': count(`contains(lower(message), 'db-3')`),
      'branch after branch': (_rel, scan) => async () => {
        const rows = [];
        for (const b of scan.branches) {
          if (rows.length >= 100) break;
          const got = await scan.connection.runAndReadAll(
            `SELECT * FROM ${b} WHERE contains(lower(message), 'db-3') LIMIT ${100 - rows.length}`,
          );
          rows.push(...got.getRows());
        }
        return rows;
      },
      'streamed, first chunks': (rel, scan) => async () => {
        const result = await scan.connection.stream(`SELECT * FROM ${rel} WHERE contains(lower(message), 'db-3') LIMIT 100`);
        let n = 0;
        for (;;) {
          const chunk = await result.fetchChunk();
          if (!chunk || chunk.rowCount === 0) break;
          n += chunk.rowCount;
        }
        return Array.from({ length: n });
      },
    },
  },
];

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], min: s[0], max: s[s.length - 1] };
};

const cluster = await startCluster('string-filters', 1);
try {
  const storage = cluster.workers[0].storage;
  const t = performance.now();
  await loadRows(storage, ROWS, 0, 1);
  console.log(`loaded ${ROWS.toLocaleString('en')} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  await cluster.query(CASES[0].kql); // the worker applies its thread setting on its first fragment
  const catalog = await new SchemaCatalogSource(cluster.coordinator, cluster.channels).get(ACCOUNT);
  for (const c of CASES) {
    if (args.match && !c.name.includes(args.match)) continue;
    const plan = planQuery(c.kql, catalog, { storageTime: true });
    const spec = plan.single ?? plan.fragments[0];
    const range = { ...scanRangeMs(spec.timeRange), ...storageTimeUs(spec) };
    const scan = await storage.openScan(ACCOUNT, SCHEMA, range);
    try {
      const names = scan.columns.map((col) => col.name);
      const planned = fragmentSql(
        { ...spec, maxRows: spec.limit, sql: inlineParams(spec.sql, spec.params) ?? spec.sql },
        scan.relation,
        names,
        scan.branches,
      );
      console.log(`\n${c.name}\n  planner: ${spec.sql}`);
      const statement = { ...spec, maxRows: spec.limit };
      const forms = {
        ...c.forms,
        "planner's statement over the union": () => planned,
        // As the worker runs it: runFragment, over the scan's branches where the statement allows.
        'planner, as the worker runs it (now)': (rel, s) => async () => {
          const rows = [];
          for await (const b of runFragment(s.connection, rel, names, statement, new AbortController().signal, 8192, s.branches))
            for (let r = 0; r < b.rowCount; r++) rows.push(b.columns.map((col) => col[r]));
          return rows;
        },
      };
      // A form is SQL over the relation, or a function of the scan that returns the rows.
      const entries = Object.entries(forms).map(([name, f]) => {
        const made = f(scan.relation, scan);
        const run = typeof made === 'string' ? async () => (await scan.connection.runAndReadAll(made)).getRows() : made;
        return [name, run];
      });
      for (const [, run] of entries) await run(); // warm-up
      const samples = entries.map(() => []);
      for (let i = 0; i < RUNS; i++)
        for (const [k, [, run]] of entries.entries()) {
          const s = performance.now();
          await run();
          samples[k].push(performance.now() - s);
        }
      for (const [k, [name, run]] of entries.entries()) {
        const { median, min, max } = stats(samples[k]);
        const rows = await run();
        const answer = rows.length === 1 && rows[0].length === 1 ? String(rows[0][0]) : `${rows.length} rows`;
        console.log(
          `  ${name.padEnd(44)} ${median.toFixed(1).padStart(8)} ms  (${min.toFixed(1)}–${max.toFixed(1)})  answer ${answer}`,
        );
      }
      console.log(
        `  load average ${loadavg()
          .map((x) => x.toFixed(2))
          .join(' ')}`,
      );
    } finally {
      await scan.release();
    }
  }
} finally {
  await cluster.stop?.();
  rmSync(DATA, { recursive: true, force: true });
}
process.exit(0);
