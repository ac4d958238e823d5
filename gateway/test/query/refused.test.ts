/**
 * What docs/query.md lists as refused is refused, by name: one sample query per listed name,
 * and the list and the samples must name the same things.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isStrataError } from '@strata/common';
import { describe, it } from 'mocha';
import { planQuery } from '../../src/query/engine.js';
import type { SchemaCatalog } from '../../src/query/types.js';

const CATALOG: SchemaCatalog = {
  tables: [
    {
      name: 'T',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 's', type: 'string' },
        { name: 'x', type: 'long' },
        { name: 'd', type: 'dynamic' },
      ],
    },
  ],
};

const SAMPLES: Record<string, string> = {
  'mv-apply': 'T | mv-apply d on (take 1)',
  evaluate: 'T | evaluate bag_unpack(d)',
  scan: 'T | scan with (step s1: x > 1;)',
  'parse-kv': 'T | parse-kv s as (a:string) with (pair_delimiter=",", kv_delimiter="=")',
  search: 'T | search "x"',
  'top-nested': 'T | top-nested 3 of s by count()',
  'top-hitters': 'T | top-hitters 3 of s',
  partition: 'T | partition by s (take 1)',
  facet: 'T | facet by s',
  fork: 'T | fork (take 1)',
  toscalar: 'print toscalar(T | count)',
  bag_merge: 'T | extend bag_merge(d, d)',
  treepath: 'T | extend treepath(d)',
  array_sort_asc: 'T | extend array_sort_asc(d)',
  array_split: 'T | extend array_split(d, 1)',
  gettype: 'T | extend gettype(d)',
  row_window_session: 'T | serialize | extend row_window_session(timestamp, 1h, 5m)',
  extract_all: 'T | extend extract_all("a", s)',
  percentilew: 'T | summarize percentilew(x, x, 50)',
  hll: 'T | summarize hll(x)',
  tdigest: 'T | summarize tdigest(x)',
  series_outliers: 'T | extend series_outliers(d)',
  series_decompose: 'T | extend series_decompose(d)',
  series_decompose_anomalies: 'T | extend series_decompose_anomalies(d)',
  series_decompose_forecast: 'T | extend series_decompose_forecast(d, 5)',
  series_periods_detect: 'T | extend series_periods_detect(d, 0, 10, 2)',
  series_periods_validate: 'T | extend series_periods_validate(d, 5)',
  series_fit_2lines: 'T | extend series_fit_2lines(d)',
  series_fit_2lines_dynamic: 'T | extend series_fit_2lines_dynamic(d)',
  series_fit_poly: 'T | extend series_fit_poly(d)',
  series_seasonal: 'T | extend series_seasonal(d)',
  series_fft: 'T | extend series_fft(d)',
  series_ifft: 'T | extend series_ifft(d, d)',
};

function refusedList(): string[] {
  const text = readFileSync(fileURLToPath(new URL('../../../../docs/query.md', import.meta.url)), 'utf8');
  const section = text.slice(text.indexOf('<!-- refused: begin -->'), text.indexOf('<!-- refused: end -->'));
  // Top-level names only: the parenthesised evaluate plugins are covered by the evaluate sample.
  const withoutNotes = section.replace(/\([^)]*\)/g, '');
  return [...withoutNotes.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
}

describe('refused by name (docs/query.md)', () => {
  it('the docs list and the samples name the same things', () => {
    assert.deepEqual(refusedList().sort(), Object.keys(SAMPLES).sort());
  });

  for (const [name, query] of Object.entries(SAMPLES)) {
    it(`refuses ${name}`, () => {
      try {
        planQuery(query, CATALOG);
      } catch (err) {
        assert.ok(isStrataError(err) && err.kind === 'invalid', String(err));
        const word = name.startsWith('parse kind=') ? name.slice('parse '.length) : name;
        assert.ok(err.message.includes(word), `${query}: ${err.message}`);
        return;
      }
      assert.fail(`accepted: ${query}`);
    });
  }
});
