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
  '%': 'T | extend v = todecimal(x) % 2',
  evaluate: 'T | evaluate autocluster()',
  scan: 'T | scan with (step s1: x > 1;)',
  facet: 'T | facet by s',
  fork: 'T | fork (take 1)',
  geo_point_buffer: 'print geo_point_buffer(1, 1, 10)',
  geo_line_buffer: 'T | extend geo_line_buffer(d, 10)',
  geo_polygon_buffer: 'T | extend geo_polygon_buffer(d, 10)',
  geo_line_densify: 'T | extend geo_line_densify(d)',
  geo_polygon_densify: 'T | extend geo_polygon_densify(d)',
  geo_line_simplify: 'T | extend geo_line_simplify(d, 10)',
  geo_polygon_simplify: 'T | extend geo_polygon_simplify(d, 10)',
  geo_simplify_polygons_array: 'T | extend geo_simplify_polygons_array(d, 10)',
  geo_line_to_s2cells: 'T | extend geo_line_to_s2cells(d)',
  geo_polygon_to_h3cells: 'T | extend geo_polygon_to_h3cells(d)',
  geo_intersection_2lines: 'T | extend geo_intersection_2lines(d, d)',
  geo_intersection_2polygons: 'T | extend geo_intersection_2polygons(d, d)',
  geo_intersection_line_with_polygon: 'T | extend geo_intersection_line_with_polygon(d, d)',
  geo_union_lines_array: 'T | extend geo_union_lines_array(d)',
  geo_union_polygons_array: 'T | extend geo_union_polygons_array(d)',
  geo_info_from_ip_address: 'T | extend geo_info_from_ip_address(s)',
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
  hash_combine: 'T | extend hash_combine(hash(s), hash(s))',
  hash_many: 'T | extend hash_many(s, s)',
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

  it('the series functions refused for an undocumented algorithm say so (decision 0044)', () => {
    for (const name of ['series_outliers', 'series_decompose_anomalies', 'series_periods_detect', 'series_fit_2lines']) {
      assert.throws(
        () => planQuery(`T | extend v = ${name}(d)`, CATALOG),
        (err: unknown) =>
          isStrataError(err) && err.message.includes(`'${name}'`) && /documentation does not specify/.test(err.message),
        name,
      );
    }
  });
});
