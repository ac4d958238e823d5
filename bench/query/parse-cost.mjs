// Measures the KQL parser adapter on this machine: warm-up, per-query parse + bind + plan cost,
// memory, and how nesting and length affect refusal time. Run after a build:
//   node bench/query/parse-cost.mjs
import { performance } from 'node:perf_hooks';

const rssBefore = process.memoryUsage().rss;
const { warmQueryEngine, planQuery } = await import('../../gateway/dist/src/query/engine.js');
const { kustoLanguage } = await import('../../gateway/dist/src/query/syntax/kusto-runtime.js');
const t0 = performance.now();
await warmQueryEngine();
const warmMs = performance.now() - t0;
const rssAfter = process.memoryUsage().rss;

const catalog = {
  tables: [
    {
      name: 'Logs',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'host', type: 'string' },
        { name: 'level', type: 'string' },
        { name: 'latencyMs', type: 'long' },
        { name: 'message', type: 'string' },
      ],
    },
  ],
};

const queries = [
  'Logs | where timestamp > ago(1h) | count',
  'Logs | where timestamp > ago(1h) | summarize count(), avg(latencyMs) by bin(timestamp, 5m), host | sort by count_ | take 10',
  'Logs | where message has "error" and level == "Error" | project timestamp, host, message | take 100',
  'let bucket = 5m; Logs | where timestamp > ago(1d) | summarize p95 = percentile(latencyMs, 95), n = count() by bin(timestamp, bucket) | render timechart',
];

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return `median ${q(0.5).toFixed(3)} ms, p99 ${q(0.99).toFixed(3)} ms`;
}

const K = kustoLanguage();
for (const q of queries) {
  const parseOnly = [];
  const full = [];
  for (let i = 0; i < 300; i++) {
    let t = performance.now();
    K.KustoCode.Parse(q);
    parseOnly.push(performance.now() - t);
    t = performance.now();
    planQuery(q, catalog);
    full.push(performance.now() - t);
  }
  console.log(`${q.slice(0, 70).padEnd(70)}  Kusto parse: ${stats(parseOnly)}; parse+bind+plan: ${stats(full)}`);
}

function timeRefusal(label, text) {
  const t = performance.now();
  let outcome = 'accepted';
  try {
    planQuery(text, catalog);
  } catch (e) {
    outcome = `refused (${e.message.slice(0, 60)})`;
  }
  console.log(`${label.padEnd(40)} ${(performance.now() - t).toFixed(1).padStart(8)} ms  ${outcome}`);
}

console.log('\nNesting, length and chains (default limits: 65,536 chars, 64 brackets, 512 expression levels):');
for (const depth of [32, 64, 65, 1000, 5000, 100000])
  timeRefusal(`${depth} nested parentheses`, `Logs | where ${'('.repeat(depth)}1${')'.repeat(depth)} == 1`);
for (const n of [100, 500, 600, 5000])
  timeRefusal(
    `or-chain of ${n} comparisons`,
    `Logs | where ${Array.from({ length: n }, (_, i) => `host == "h${i}"`).join(' or ')}`,
  );
timeRefusal('65,536 characters of a string', `print "${'x'.repeat(65_520)}"`);
timeRefusal('1,000,000 characters', 'x'.repeat(1_000_000));
timeRefusal('10,000 pipes', `Logs${' | take 1'.repeat(10_000)}`.slice(0, 65_000));
// The hostile shapes of gateway/test/query/properties.test.ts at their largest: the tests check
// only that each is planned or refused with a query error; how long that takes is read here.
timeRefusal('20,000-term sum', `print ${Array(20_000).fill('1').join('+')}`);
timeRefusal('5,000 pipes of take', `Logs${' | take 1'.repeat(5_000)}`);
timeRefusal(
  'or-chain of 3,000 comparisons',
  `Logs | where ${Array.from({ length: 3_000 }, (_, i) => `host == "h${i}"`).join(' or ')}`,
);
timeRefusal('200,000-character literal', `print "${'x'.repeat(200_000)}"`);
timeRefusal(
  'chain of 2,000 lets',
  `${Array.from({ length: 2_000 }, (_, i) => `let t${i} = ${i > 0 ? `t${i - 1}` : 'Logs'};`).join(' ')} t1999 | count`,
);
timeRefusal('dynamic nested 5,000 deep', `print dynamic(${'['.repeat(5_000)}${']'.repeat(5_000)})`);

console.log(
  `\nwarm-up (load + first parse, analysis and completion): ${warmMs.toFixed(0)} ms; RSS +${((rssAfter - rssBefore) / 1e6).toFixed(0)} MB`,
);
