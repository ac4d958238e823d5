import assert from 'node:assert/strict';
import { jsonDepthWithin, MAX_JSON_DEPTH, ndjsonDepthWithin } from '../../src/index.js';

const nested = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
  return v;
};
const ndjson = (...rows: unknown[]) => Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n'));

describe('JSON nesting depth', () => {
  it('measures parsed values and NDJSON bytes the same way', () => {
    for (const levels of [0, 1, 2, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1]) {
      const within = levels <= MAX_JSON_DEPTH;
      assert.equal(jsonDepthWithin(nested(levels), MAX_JSON_DEPTH), within, `${levels} levels`);
      assert.equal(ndjsonDepthWithin(ndjson(nested(levels)), MAX_JSON_DEPTH), within, `${levels} levels as NDJSON`);
    }
  });
  it('counts each line from zero and ignores brackets inside strings, escaped quotes included', () => {
    const rows = Array.from({ length: 100 }, () => nested(MAX_JSON_DEPTH));
    assert.equal(ndjsonDepthWithin(ndjson(...rows), MAX_JSON_DEPTH), true);
    const text = { s: `${'['.repeat(500)}\\"${'{'.repeat(500)}"` };
    assert.equal(ndjsonDepthWithin(ndjson(text, { t: 'x\\"[[[' }), 1), true);
  });
  it('refuses 10,000 levels without recursion', () => {
    const deep = Buffer.from(`{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    assert.equal(ndjsonDepthWithin(deep, MAX_JSON_DEPTH + 1), false);
  });
});
