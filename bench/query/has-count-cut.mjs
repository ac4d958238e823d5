// Prices the alternative of decision 0041 for `has <frequent term> | count`: exact row counts per
// key kept at seal. The seal already cuts each text into keys for the term index
// (worker term-key-hashes.ts, TermKeyCutter: hashes each key into a set). This times that cut
// against a prototype of the same cut that also counts, per key, the rows holding it (each row
// once) split into certain rows (the run bounded by ASCII non-letters-or-digits or the text's
// edges) and uncertain ones (the run touches a non-ASCII byte), over the bench's messages as UTF-8
// (interleaved, --rounds rounds, median). The prototype's count of "timeout" is checked against a
// regex count. A prototype only: nothing here is used by the product.
//
//   npm run build && node bench/query/has-count-cut.mjs [--rows 1000000] [--rounds 7]
import { xxHash32 } from 'js-xxhash';
import { TermKeyCutter } from '../../worker/dist/src/storage/term-key-hashes.js';
import { median, numberArg } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const ROUNDS = numberArg('rounds', 7);

// The bench's message column (bench-cluster.mjs makeRow), with a fixed seed.
let seed = 7;
const r = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const PATHS = ['/api/users', '/api/orders', '/api/items', '/api/search', '/health', '/login', '/api/cart', '/api/pay'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const texts = [];
for (let i = 0; i < ROWS; i++) {
  const u = r();
  const level = u < 0.05 ? 'Error' : u < 0.15 ? 'Warning' : 'Info';
  const latencyMs = Math.floor(-Math.log(1 - r()) * 80) + (level === 'Error' ? 1000 : 0);
  const method = METHODS[Math.floor(r() * METHODS.length)];
  const p = PATHS[Math.floor(r() * PATHS.length)];
  texts.push(
    level === 'Error'
      ? `upstream timeout after ${latencyMs}ms calling db-${Math.floor(r() * 4)}`
      : level === 'Warning'
        ? `slow response ${latencyMs}ms for ${method} ${p}`
        : `${method} ${p}/${Math.floor(r() * 10_000)} ${u < 0.1 ? 404 : 200} in ${latencyMs}ms`,
  );
}
const bytes = Buffer.from(texts.join(''));
const offsets = new Uint32Array(ROWS + 1);
for (let i = 0, o = 0; i < ROWS; i++) {
  offsets[i] = o;
  o += Buffer.byteLength(texts[i]);
  offsets[i + 1] = o;
}

/** Today's cut: every row's keys into the hash-pair set. */
function cutToday() {
  const cutter = new TermKeyCutter();
  for (let i = 0; i < ROWS; i++) cutter.addText(bytes, offsets[i], offsets[i + 1]);
  return cutter.keys.size;
}

/** The same cut, also counting rows per key (certain / uncertain), each row once per key. */
class CountingCutter {
  size = 0;
  h1 = new Uint32Array(1024);
  h2 = new Uint32Array(1024);
  used = new Uint8Array(1024);
  lastRow = new Int32Array(1024).fill(-1);
  certain = new Uint32Array(1024);
  uncertain = new Uint32Array(1024);
  lastCertainRow = new Int32Array(1024).fill(-1);
  scratch = new Uint8Array(256);
  addText(row, b, start, end) {
    if (this.scratch.length < end - start) this.scratch = new Uint8Array(end - start);
    const key = this.scratch;
    let length = 0;
    let touches = false; // the run started next to a non-ASCII byte
    for (let i = start; i < end; i++) {
      const c = b[i];
      if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)) key[length++] = c;
      else if (c >= 0x41 && c <= 0x5a) key[length++] = c + 0x20;
      else if (c === 0xe2 && i + 2 < end && b[i + 1] === 0x84 && b[i + 2] === 0xaa) {
        key[length++] = 0x6b;
        i += 2;
      } else if (c === 0xc5 && i + 1 < end && b[i + 1] === 0xbf) {
        key[length++] = 0x73;
        i += 1;
      } else {
        if (length > 0) this.addKey(row, length, touches || c >= 0x80);
        length = 0;
        touches = c >= 0x80;
      }
    }
    if (length > 0) this.addKey(row, length, touches);
  }
  addKey(row, length, uncertain) {
    const k = this.scratch.subarray(0, length);
    const a = xxHash32(k, 0);
    const d = xxHash32(k, 1);
    if ((this.size + 1) * 2 > this.used.length) this.grow();
    const s = this.slot(a, d);
    if (this.lastRow[s] !== row) {
      this.lastRow[s] = row;
      this.uncertain[s]++;
    }
    if (!uncertain && this.lastCertainRow[s] !== row) {
      this.lastCertainRow[s] = row;
      this.certain[s]++;
      this.uncertain[s]--; // counted as certain, not uncertain
    }
  }
  slot(a, d) {
    const mask = this.used.length - 1;
    let s = (a ^ Math.imul(d, 0x9e3779b1)) & mask;
    while (this.used[s] === 1) {
      if (this.h1[s] === a && this.h2[s] === d) return s;
      s = (s + 1) & mask;
    }
    this.used[s] = 1;
    this.h1[s] = a;
    this.h2[s] = d;
    this.size++;
    return s;
  }
  grow() {
    const cols = ['lastRow', 'certain', 'uncertain', 'lastCertainRow'];
    const old = { h1: this.h1, h2: this.h2, used: this.used, ...Object.fromEntries(cols.map((c) => [c, this[c]])) };
    const n = old.used.length * 2;
    this.h1 = new Uint32Array(n);
    this.h2 = new Uint32Array(n);
    this.used = new Uint8Array(n);
    for (const c of cols) this[c] = c.startsWith('last') ? new Int32Array(n).fill(-1) : new Uint32Array(n);
    this.size = 0;
    for (let s = 0; s < old.used.length; s++) {
      if (old.used[s] !== 1) continue;
      const t = this.slot(old.h1[s], old.h2[s]);
      for (const c of cols) this[c][t] = old[c][s];
    }
  }
}

function cutCounting() {
  const cutter = new CountingCutter();
  for (let i = 0; i < ROWS; i++) cutter.addText(i, bytes, offsets[i], offsets[i + 1]);
  return cutter;
}

// The prototype's count of "timeout" against the term rule (ASCII texts: a regex decides it).
const counted = cutCounting();
const k = Buffer.from('timeout');
const s = counted.slot(xxHash32(k, 0), xxHash32(k, 1));
const truth = texts.filter((t) => /(^|[^A-Za-z0-9])timeout([^A-Za-z0-9]|$)/i.test(t)).length;
console.log(
  `rows ${ROWS}: "timeout" certain ${counted.certain[s]}, uncertain ${counted.uncertain[s]}, regex ${truth}; keys ${counted.size}`,
);
if (counted.certain[s] !== truth || counted.uncertain[s] !== 0) throw new Error('the prototype count is wrong');
const frequent = [];
for (let t = 0; t < counted.used.length; t++)
  if (counted.used[t] && counted.certain[t] + counted.uncertain[t] >= ROWS / 100) frequent.push(t);
console.log(`keys in at least 1 % of the rows: ${frequent.length}; distinct texts ${new Set(texts).size}`);

const a = [];
const b = [];
for (let i = 0; i < ROUNDS; i++) {
  let t = performance.now();
  cutToday();
  a.push(performance.now() - t);
  t = performance.now();
  cutCounting();
  b.push(performance.now() - t);
}
const f = (xs) => `${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
console.log(`cut, today (hash set):            ${f(a)}`);
console.log(`cut + row counts per key:         ${f(b)}  ratio ${(median(b) / median(a)).toFixed(2)}`);
