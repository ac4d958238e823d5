/**
 * Kusto's decimal (SqlDecimal; decision 0031). Every expected value is written by hand from
 * SqlDecimal's rules (precision and scale of each result, truncated quotients, rounding half away
 * from zero), not computed by the implementation. `print` runs in the gateway's merge database;
 * queries over Logs run on one worker and on three (fixture.run checks they agree).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, run } from './fixture.js';

const one = async (q: string) => {
  const r = await run(q);
  assert.equal(r.results.length, 1);
  return r.results[0] as Record<string, unknown>;
};

describe('decimal (SqlDecimal)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('literals keep their digits and scale; the result type is Decimal with text values', async () => {
    const r = await run(
      'print a = decimal(1.50), b = decimal(1e5), c = decimal(null), d = decimal(-0.0), e = decimal(1.5e-3), f = decimal(0.01)',
    );
    assert.deepEqual(
      r.columns.map((c) => c.type),
      ['Decimal', 'Decimal', 'Decimal', 'Decimal', 'Decimal', 'Decimal'],
    );
    assert.deepEqual(r.results[0], { a: '1.50', b: '100000', c: null, d: '0.0', e: '0.0015', f: '0.01' });
  });

  it('0.1 + 0.2 is 0.3 exactly; 1/3 is 0.333333; sums and products by SqlDecimal', async () => {
    const r = await one(`print s = decimal(0.1) + decimal(0.2), q = decimal(1) / decimal(3), q2 = decimal(2.00000) / decimal(3),
      p = decimal(1.5) * decimal(1.25), d = decimal(1.50) - decimal(2), n = -decimal(1.50), z = decimal(1) / decimal(0)`);
    assert.deepEqual(r, { s: '0.3', q: '0.333333', q2: '0.6666666', p: '1.875', d: '-0.50', n: '-1.50', z: null });
  });
});
