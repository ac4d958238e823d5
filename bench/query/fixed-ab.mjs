// The fixed cost of a query, A/B: two builds of Strata (two checkouts, each built) serve the same
// small query side by side, each an in-process cluster in its own process
// (`fixed-cost.mjs --serve`), and this process sends the query to both alternately — the order
// within each pair drawn at random — over the same lean HTTP client. On a machine shared with
// other work, the load then falls on both sides alike: the paired difference (B − A, median of
// the pairs) is the figure to read, more than either side's median.
//
//   node bench/query/fixed-ab.mjs --a <checkout A> --b <checkout B> [--runs 2000] [--rows 100000] [--query N] [--workers 1] [--etcd]
//     [--data-a DIR --data-b DIR] [--gap MS]
//
// --data-a / --data-b: each side serves the data kept in its directory (fixed-cost.mjs --data; two
// copies of one settled layout, as a DuckDB file is open in one process at a time). --gap MS
// pauses before each pair, as between an occasional user's queries (the gateway's caches expire).
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ACCOUNT, numberArg } from './bench-cluster.mjs';

const args = process.argv.slice(2);
const stringArg = (name, def) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : def);
const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const A = path.resolve(stringArg('a', HERE));
const B = path.resolve(stringArg('b', HERE));
const RUNS = numberArg('runs', 2000);
const passed = [
  '--rows',
  String(numberArg('rows', 100_000)),
  '--query',
  String(numberArg('query', 9)),
  '--workers',
  String(numberArg('workers', 1)),
];
if (args.includes('--etcd')) passed.push('--etcd');

/** Starts one side's server; resolves with its address and query once it serves. */
function serve(root, data) {
  const kept = data ? ['--data', path.resolve(data)] : [];
  const child = spawn(process.execPath, [path.join(root, 'bench/query/fixed-cost.mjs'), '--serve', ...passed, ...kept], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const ready = new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${root}: the server exited (${code})`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{"url"')) resolve(JSON.parse(line));
    });
  });
  const stop = () =>
    new Promise((resolve) => {
      child.once('exit', resolve);
      child.stdin.end();
    });
  return { child, ready, stop };
}

const agent = new http.Agent({ keepAlive: true });

function post(url, pathname, body, token) {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}${pathname}`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const answer = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`${res.statusCode} ${answer}`));
          else resolve(JSON.parse(answer));
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const GAP = numberArg('gap', 0);
const sides = [serve(A, stringArg('data-a')), serve(B, stringArg('data-b'))];
try {
  const servers = await Promise.all(sides.map((s) => s.ready));
  const tokens = await Promise.all(
    servers.map(async (s) => (await post(s.url, '/auth/token', { username: 'bench', password: 'bench-password-1' })).token),
  );
  const once = async (i) => {
    const t = performance.now();
    const answer = await post(servers[i].url, `/search/${ACCOUNT}/kusto`, { query: servers[i].kql }, tokens[i]);
    const ms = performance.now() - t;
    return { ms, answer: JSON.stringify(answer.results) };
  };
  for (let i = 0; i < 100; i++) await Promise.all([once(0), once(1)]);
  const times = [[], []];
  const diffs = [];
  // Each side made its rows relative to its own start, so a window over ago() may count a few
  // rows more or less on one side; a query over all rows answers alike.
  let differing = 0;
  for (let r = 0; r < RUNS; r++) {
    if (GAP > 0) await new Promise((resolve) => setTimeout(resolve, GAP));
    const order = Math.random() < 0.5 ? [0, 1] : [1, 0];
    const got = [];
    for (const i of order) got[i] = await once(i);
    if (got[0].answer !== got[1].answer) differing++;
    times[0].push(got[0].ms);
    times[1].push(got[1].ms);
    diffs.push(got[1].ms - got[0].ms);
  }
  const q = (xs, f) => [...xs].sort((a, b) => a - b)[Math.floor(f * (xs.length - 1))].toFixed(2);
  const show = (name, xs) => `${name} median ${q(xs, 0.5)} ms (quartiles ${q(xs, 0.25)}–${q(xs, 0.75)})`;
  console.log(`${servers[0].kql}: ${RUNS} pairs`);
  console.log(`  ${show('A', times[0])}  ${A}`);
  console.log(`  ${show('B', times[1])}  ${B}`);
  console.log(`  answers differed in ${differing} of ${RUNS} pairs`);
  console.log(`  B − A per pair: median ${q(diffs, 0.5)} ms (quartiles ${q(diffs, 0.25)}–${q(diffs, 0.75)})`);
} finally {
  await Promise.all(sides.map((s) => s.stop()));
}
