/**
 * The function registry is the one home of functions and aggregates: every entry is documented
 * (docs/query.md's reference is rendered from it), offered by completions, and named and typed
 * as Microsoft's analyzer names and types the same call.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'mocha';
import { bindQuery } from '../../src/query/engine.js';
import { parseQuery } from '../../src/query/parse-info.js';
import { DOCS_BEGIN, DOCS_END, registryDocsTable } from '../../src/query/semantic/registry/docs-table.js';
import { allFunctions } from '../../src/query/semantic/registry/registry.js';
import { warmKustoParser } from '../../src/query/syntax/kusto-runtime.js';
import type { SchemaCatalog } from '../../src/query/types.js';
import { kustoColumns } from './kusto-analyzer.js';

const DOCS = fileURLToPath(new URL('../../../../docs/query.md', import.meta.url));

const COLUMNS = 'timestamp:datetime, x:long, y:real, s:string, d:dynamic, b:bool, ts:timespan';
const CATALOG: SchemaCatalog = {
  tables: [
    {
      name: 'T',
      columns: COLUMNS.split(', ').map((c) => {
        const [name, type] = c.split(':') as [string, SchemaCatalog['tables'][0]['columns'][0]['type']];
        return { name, type };
      }),
    },
  ],
};

/** One call of every registered name over table T, in the form the analyzer knows. */
/** Statements a sample needs before the query (bin_auto reads the query's bin size option). */
const SETUP: Record<string, string> = { bin_auto: 'set query_bin_auto_size = 10;\n' };

const SAMPLES: Record<string, string> = {
  ago: 'ago(ts)',
  now: 'now()',
  bin: 'bin(x, 5)',
  floor: 'floor(y, 1.5)',
  todatetime: 'todatetime(s)',
  datetime: 'datetime(2024-01-01)',
  tostring: 'tostring(x)',
  toint: 'toint(s)',
  tolong: 'tolong(y)',
  todouble: 'todouble(x)',
  todecimal: 'todecimal(x)',
  toreal: 'toreal(s)',
  tobool: 'tobool(s)',
  toboolean: 'toboolean(s)',
  toguid: 'toguid(s)',
  totimespan: 'totimespan(x)', // from a string: issue 17
  parse_json: 'parse_json(s)',
  todynamic: 'todynamic(s)',
  strlen: 'strlen(s)',
  substring: 'substring(s, 1, 2)',
  tolower: 'tolower(s)',
  toupper: 'toupper(s)',
  strcat: 'strcat(s, x)',
  extract: 'extract("a(b)", 1, s, typeof(long))',
  iff: 'iff(b, x, 2)',
  iif: 'iif(b, s, "n")',
  case: 'case(b, y, x > 1, 2.0, 0.0)',
  coalesce: 'coalesce(x, 1)',
  isnull: 'isnull(x)',
  isnotnull: 'isnotnull(y)',
  isempty: 'isempty(s)',
  isnotempty: 'isnotempty(s)',
  not: 'not(b)',
  round: 'round(y, 2)',
  abs: 'abs(ts)',
  sqrt: 'sqrt(x)',
  startofday: 'startofday(timestamp)',
  startofweek: 'startofweek(timestamp, 1)',
  startofmonth: 'startofmonth(timestamp)',
  datetime_part: 'datetime_part("hour", timestamp)',
  format_datetime: 'format_datetime(timestamp, "yyyy-MM-dd")',
  count: 'count()',
  countif: 'countif(b)',
  sum: 'sum(ts)',
  sumif: 'sumif(y, b)',
  avg: 'avg(x)',
  min: 'min(s)',
  max: 'max(timestamp)',
  dcount: 'dcount(s)',
  percentile: 'percentile(y, 99.5)',
  percentiles: 'percentiles(x, 5, 50)',
  arg_max: 'arg_max(timestamp, s, x)',
  arg_min: 'arg_min(x, *)',
  make_list: 'make_list(s)',
  make_set: 'make_set(x, 10)',
  take_any: 'take_any(y)',
  stdev: 'stdev(x)',
  variance: 'variance(y)',
  pack_array: 'pack_array(x, s, timestamp)',
  bag_pack: 'bag_pack("k", x, "s", s)',
  pack: 'pack("k", y)',
  bag_keys: 'bag_keys(d)',
  bag_has_key: 'bag_has_key(d, "a")',
  array_length: 'array_length(d)',
  array_concat: 'array_concat(d, d)',
  array_reverse: 'array_reverse(d)',
  array_slice: 'array_slice(d, 1, -1)',
  array_sum: 'array_sum(d)',
  array_index_of: 'array_index_of(d, s)',
  bag_remove_keys: 'bag_remove_keys(d, dynamic(["a"]))',
  zip: 'zip(d, d)',
  set_has_element: 'set_has_element(d, x)',
  set_union: 'set_union(d, d)',
  set_intersect: 'set_intersect(d, d, d)',
  set_difference: 'set_difference(d, d)',
  row_number: 'row_number()',
  prev: 'prev(x, 1, 0)',
  next: 'next(s)',
  row_cumsum: 'row_cumsum(y)',
  row_window_session: 'row_window_session(timestamp, 1h, 5m, b)',
  avgif: 'avgif(x, b)',
  minif: 'minif(s, b)',
  maxif: 'maxif(timestamp, x > 1)',
  dcountif: 'dcountif(s, b)',
  make_list_if: 'make_list_if(s, b)',
  make_set_if: 'make_set_if(x, b, 5)',
  make_list_with_nulls: 'make_list_with_nulls(y)',
  take_anyif: 'take_anyif(s, b)',
  stdevif: 'stdevif(y, b)',
  varianceif: 'varianceif(x, b)',
  make_bag: 'make_bag(d)',
  make_bag_if: 'make_bag_if(d, b, 10)',
  binary_all_and: 'binary_all_and(x)',
  binary_all_or: 'binary_all_or(x)',
  binary_all_xor: 'binary_all_xor(x)',
  stdevp: 'stdevp(x)',
  variancep: 'variancep(y)',
  percentiles_array: 'percentiles_array(x, 50, 95)',
  array_sort_asc: 'array_sort_asc(d)',
  array_sort_desc: 'array_sort_desc(d, false)',
  array_split: 'array_split(d, 2)',
  array_rotate_left: 'array_rotate_left(d, 1)',
  array_rotate_right: 'array_rotate_right(d, -1)',
  array_shift_left: 'array_shift_left(d, 1)',
  array_shift_right: 'array_shift_right(d, 1, 0)',
  array_iff: 'array_iff(d, d, d)',
  array_iif: 'array_iif(d, 1, 0)',
  bag_merge: 'bag_merge(d, d)',
  treepath: 'treepath(d)',
  gettype: 'gettype(d)',
  pack_all: 'pack_all(true)',
  extract_all: 'extract_all("(a)(b)", dynamic([1]), s)',
  extract_json: 'extract_json("$.a", s, typeof(long))',
  parse_url: 'parse_url(s)',
  parse_urlquery: 'parse_urlquery(s)',
  parse_path: 'parse_path(s)',
  parse_csv: 'parse_csv(s)',
  format_bytes: 'format_bytes(y, 1, "KB")',
  url_encode: 'url_encode(s)',
  isutf8: 'isutf8(s)',
  base64_encode_fromarray: 'base64_encode_fromarray(d)',
  base64_decode_toarray: 'base64_decode_toarray(s)',
  base64_encode_fromguid: 'base64_encode_fromguid(toguid(s))',
  base64_decode_toguid: 'base64_decode_toguid(s)',
  extractall: 'extractall("(a)", s)',
  extractjson: 'extractjson("$.a", s)',
  parseurl: 'parseurl(s)',
  parseurlquery: 'parseurlquery(s)',
  pack_dictionary: 'pack_dictionary("a", x)',
  percentilew: 'percentilew(x, x, 50)',
  percentilesw: 'percentilesw(y, x, 50, 95.5)',
  percentilesw_array: 'percentilesw_array(x, x, 50, 90)',
  hll: 'hll(s)',
  hll_if: 'hll_if(x, b)',
  hll_merge: 'hll_merge(d)',
  tdigest: 'tdigest(x, x)',
  tdigest_merge: 'tdigest_merge(d)',
  covariance: 'covariance(x, y)',
  covariancep: 'covariancep(y, x)',
  covarianceif: 'covarianceif(x, y, b)',
  covariancepif: 'covariancepif(x, y, b)',
  dcount_hll: 'dcount_hll(d)',
  percentile_tdigest: 'percentile_tdigest(d, 50, typeof(long))',
  percentiles_array_tdigest: 'percentiles_array_tdigest(d, 50, 90)',
  strcat_delim: 'strcat_delim("-", s, x)',
  strcat_array: 'strcat_array(d, ",")',
  strrep: 'strrep(s, 2, ",")',
  strcmp: 'strcmp(s, "a")',
  reverse: 'reverse(s)',
  indexof: 'indexof(s, "a", 1, -1, 2)',
  countof: 'countof(s, "a", "regex")',
  replace_string: 'replace_string(s, "a", "b")',
  replace_regex: 'replace_regex(s, "a(b)", @"\\1")',
  translate: 'translate("ab", "xy", s)',
  trim: 'trim("-", s)',
  trim_start: 'trim_start("-", s)',
  trim_end: 'trim_end("-", s)',
  split: 'split(s, ",", 0)',
  string_size: 'string_size(s)',
  isascii: 'isascii(s)',
  to_utf8: 'to_utf8(s)',
  unicode_codepoints_from_string: 'unicode_codepoints_from_string(s)',
  unicode_codepoints_to_string: 'unicode_codepoints_to_string(d)',
  make_string: 'make_string(x, d)',
  base64_encode_tostring: 'base64_encode_tostring(s)',
  base64_decode_tostring: 'base64_decode_tostring(s)',
  url_encode_component: 'url_encode_component(s)',
  url_decode: 'url_decode(s)',
  new_guid: 'new_guid()',
  bin_at: 'bin_at(timestamp, 1h, datetime(2024-01-01))',
  datetime_add: 'datetime_add("month", x, timestamp)',
  datetime_diff: 'datetime_diff("day", timestamp, now())',
  dayofweek: 'dayofweek(timestamp)',
  dayofmonth: 'dayofmonth(timestamp)',
  dayofyear: 'dayofyear(timestamp)',
  getyear: 'getyear(timestamp)',
  getmonth: 'getmonth(timestamp)',
  monthofyear: 'monthofyear(timestamp)',
  hourofday: 'hourofday(timestamp)',
  week_of_year: 'week_of_year(timestamp)',
  startofyear: 'startofyear(timestamp, -1)',
  endofday: 'endofday(timestamp)',
  endofweek: 'endofweek(timestamp, 1)',
  endofmonth: 'endofmonth(timestamp)',
  endofyear: 'endofyear(timestamp, -1)',
  make_datetime: 'make_datetime(x, 1, 2, 3, 4, y)',
  make_timespan: 'make_timespan(1, 2, 3, x)',
  unixtime_seconds_todatetime: 'unixtime_seconds_todatetime(y)',
  unixtime_milliseconds_todatetime: 'unixtime_milliseconds_todatetime(x)',
  unixtime_microseconds_todatetime: 'unixtime_microseconds_todatetime(x)',
  unixtime_nanoseconds_todatetime: 'unixtime_nanoseconds_todatetime(x)',
  datetime_utc_to_local: 'datetime_utc_to_local(timestamp, "Europe/Berlin")',
  datetime_local_to_utc: 'datetime_local_to_utc(timestamp, "UTC")',
  log: 'log(y)',
  log2: 'log2(y)',
  log10: 'log10(y)',
  exp: 'exp(y)',
  exp2: 'exp2(y)',
  exp10: 'exp10(y)',
  sin: 'sin(y)',
  cos: 'cos(y)',
  tan: 'tan(y)',
  asin: 'asin(y)',
  acos: 'acos(y)',
  atan: 'atan(y)',
  cot: 'cot(y)',
  degrees: 'degrees(y)',
  radians: 'radians(y)',
  gamma: 'gamma(y)',
  loggamma: 'loggamma(y)',
  pow: 'pow(y, x)',
  atan2: 'atan2(y, x)',
  pi: 'pi()',
  sign: 'sign(x)',
  isfinite: 'isfinite(y)',
  isinf: 'isinf(y)',
  isnan: 'isnan(y)',
  ceiling: 'ceiling(y)',
  max_of: 'max_of(x, y, 3)',
  min_of: 'min_of(s, "a")',
  rand: 'rand(10)',
  binary_and: 'binary_and(x, 3)',
  binary_or: 'binary_or(x, 3)',
  binary_xor: 'binary_xor(x, 3)',
  binary_not: 'binary_not(x)',
  binary_shift_left: 'binary_shift_left(x, 2)',
  binary_shift_right: 'binary_shift_right(x, 2)',
  tohex: 'tohex(x, 8)',
  parse_ipv4: 'parse_ipv4(s)',
  parse_ipv4_mask: 'parse_ipv4_mask(s, 24)',
  ipv4_compare: 'ipv4_compare(s, "10.0.0.1", 8)',
  ipv4_is_match: 'ipv4_is_match(s, "10.0.0.1")',
  ipv4_is_in_range: 'ipv4_is_in_range(s, "10.0.0.0/8")',
  ipv4_is_in_any_range: 'ipv4_is_in_any_range(s, "10.0.0.0/8", "192.168.0.0/16")',
  ipv4_is_private: 'ipv4_is_private(s)',
  ipv4_netmask_suffix: 'ipv4_netmask_suffix(s)',
  format_ipv4: 'format_ipv4(x, 24)',
  format_ipv4_mask: 'format_ipv4_mask(s, 24)',
  parse_ipv6: 'parse_ipv6(s)',
  parse_ipv6_mask: 'parse_ipv6_mask(s, 64)',
  ipv6_compare: 'ipv6_compare(s, "::1", 64)',
  ipv6_is_match: 'ipv6_is_match(s, "::1")',
  ipv6_is_in_range: 'ipv6_is_in_range(s, "fe80::/10")',
  ipv6_is_in_any_range: 'ipv6_is_in_any_range(s, "fe80::/10", "::1")',
  ipv4_range_to_cidr_list: 'ipv4_range_to_cidr_list(s, "10.0.0.255")',
  geo_point_to_geohash: 'geo_point_to_geohash(y, y, 6)',
  geo_geohash_to_central_point: 'geo_geohash_to_central_point(s)',
  geo_geohash_to_polygon: 'geo_geohash_to_polygon(s)',
  geo_geohash_neighbors: 'geo_geohash_neighbors(s)',
  geo_point_to_s2cell: 'geo_point_to_s2cell(y, y)',
  geo_s2cell_to_central_point: 'geo_s2cell_to_central_point(s)',
  geo_s2cell_to_polygon: 'geo_s2cell_to_polygon(s)',
  geo_s2cell_neighbors: 'geo_s2cell_neighbors(s)',
  geo_point_to_h3cell: 'geo_point_to_h3cell(y, y, 7)',
  geo_h3cell_to_central_point: 'geo_h3cell_to_central_point(s)',
  geo_h3cell_to_polygon: 'geo_h3cell_to_polygon(s)',
  geo_h3cell_neighbors: 'geo_h3cell_neighbors(s)',
  geo_h3cell_level: 'geo_h3cell_level(s)',
  geo_h3cell_parent: 'geo_h3cell_parent(s, 3)',
  geo_h3cell_children: 'geo_h3cell_children(s)',
  geo_h3cell_rings: 'geo_h3cell_rings(s, 2)',
  geo_distance_2points: 'geo_distance_2points(y, y, 1.5, 2)',
  geo_point_in_circle: 'geo_point_in_circle(y, y, 0, 0, 1000)',
  geo_azimuth: 'geo_azimuth(y, y, 1, 2)',
  geo_angle: 'geo_angle(y, y, 1, 2, 3, 4)',
  geo_point_in_polygon: 'geo_point_in_polygon(y, y, d)',
  geo_distance_point_to_polygon: 'geo_distance_point_to_polygon(y, y, d)',
  geo_distance_point_to_line: 'geo_distance_point_to_line(y, y, d)',
  geo_polygon_area: 'geo_polygon_area(d)',
  geo_polygon_perimeter: 'geo_polygon_perimeter(d)',
  geo_line_length: 'geo_line_length(d)',
  geo_intersects_2lines: 'geo_intersects_2lines(d, d)',
  geo_polygon_centroid: 'geo_polygon_centroid(d)',
  geo_polygon_to_s2cells: 'geo_polygon_to_s2cells(d, 8)',
  geo_line_centroid: 'geo_line_centroid(d)',
  geo_line_interpolate_point: 'geo_line_interpolate_point(d, 0.5)',
  geo_line_locate_point: 'geo_line_locate_point(d, y, 2)',
  geo_intersects_2polygons: 'geo_intersects_2polygons(d, d)',
  geo_intersects_line_with_polygon: 'geo_intersects_line_with_polygon(d, d)',
  has_ipv4: 'has_ipv4(s, "10.0.0.1")',
  has_any_ipv4: 'has_any_ipv4(s, "10.0.0.1", "10.0.0.2")',
  has_ipv4_prefix: 'has_ipv4_prefix(s, "10.0.")',
  has_any_ipv4_prefix: 'has_any_ipv4_prefix(s, dynamic(["10.", "127.0."]))',
  hash_md5: 'hash_md5(s)',
  hash_sha1: 'hash_sha1(s)',
  hash_sha256: 'hash_sha256(s)',
  hash_xxhash64: 'hash_xxhash64(s, 100)',
  hash: 'hash(timestamp, 10)',
  bin_auto: 'bin_auto(x)',
  erf: 'erf(y)',
  erfc: 'erfc(y)',
  format_timespan: 'format_timespan(ts, "hh:mm")',
  zlib_compress_to_base64_string: 'zlib_compress_to_base64_string(s)',
  zlib_decompress_from_base64_string: 'zlib_decompress_from_base64_string(s)',
  gzip_compress_to_base64_string: 'gzip_compress_to_base64_string(s)',
  gzip_decompress_from_base64_string: 'gzip_decompress_from_base64_string(s)',
  series_add: 'series_add(d, 2)',
  series_subtract: 'series_subtract(d, 2)',
  series_multiply: 'series_multiply(d, 2)',
  series_divide: 'series_divide(d, 2)',
  series_pow: 'series_pow(d, 2)',
  series_greater: 'series_greater(d, 2)',
  series_greater_equals: 'series_greater_equals(d, 2)',
  series_less: 'series_less(d, 2)',
  series_less_equals: 'series_less_equals(d, 2)',
  series_equals: 'series_equals(d, 2)',
  series_not_equals: 'series_not_equals(d, 2)',
  series_abs: 'series_abs(d)',
  series_sign: 'series_sign(d)',
  series_ceiling: 'series_ceiling(d)',
  series_floor: 'series_floor(d)',
  series_acos: 'series_acos(d)',
  series_asin: 'series_asin(d)',
  series_atan: 'series_atan(d)',
  series_cos: 'series_cos(d)',
  series_sin: 'series_sin(d)',
  series_tan: 'series_tan(d)',
  series_exp: 'series_exp(d)',
  series_log: 'series_log(d)',
  series_sum: 'series_sum(d)',
  series_magnitude: 'series_magnitude(d)',
  series_dot_product: 'series_dot_product(d, d)',
  series_cosine_similarity: 'series_cosine_similarity(d, d)',
  series_pearson_correlation: 'series_pearson_correlation(d, d)',
  series_fill_forward: 'series_fill_forward(d)',
  series_fill_backward: 'series_fill_backward(d, 0)',
  series_fill_const: 'series_fill_const(d, 0)',
  series_fill_linear: 'series_fill_linear(d, long(null), false, 1)',
  series_fir: 'series_fir(d, dynamic([1, 1]), true, false)',
  series_iir: 'series_iir(d, dynamic([1]), dynamic([1, -1]))',
  series_stats_dynamic: 'series_stats_dynamic(d, true)',
  series_stats: 'series_stats(d)',
  series_fit_line: 'series_fit_line(d)',
  series_fit_line_dynamic: 'series_fit_line_dynamic(d)',
  punycode_from_string: 'punycode_from_string(s)',
  punycode_to_string: 'punycode_to_string(s)',
  punycode_domain_from_string: 'punycode_domain_from_string(s)',
  punycode_domain_to_string: 'punycode_domain_to_string(s)',
};

/** The scalar form's sample where a name is both an aggregate and a scalar function. */
const SCALAR_SAMPLES: Record<string, string> = {
  hll_merge: 'hll_merge(d, d)',
  tdigest_merge: 'tdigest_merge(d, d)',
};

const engineColumns = (query: string): string[] =>
  bindQuery(query, CATALOG).bound.columns.map((c) => `${c.name}:${c.int32 ? 'int' : c.type}`);

function docsText(): string {
  return readFileSync(DOCS, 'utf8');
}

describe('function registry', () => {
  before(async function () {
    this.timeout(60_000);
    await warmKustoParser();
  });

  it('docs/query.md carries the reference rendered from the registry', () => {
    const text = docsText();
    const begin = text.indexOf(DOCS_BEGIN);
    const end = text.indexOf(DOCS_END);
    assert.ok(begin >= 0 && end > begin, 'docs/query.md has the registry markers');
    const current = text.slice(begin, end + DOCS_END.length);
    const expected = registryDocsTable();
    if (current !== expected && process.env.UPDATE_DOCS === '1') {
      writeFileSync(DOCS, text.slice(0, begin) + expected + text.slice(end + DOCS_END.length));
      return;
    }
    assert.equal(current, expected, 'docs/query.md is stale: run the tests with UPDATE_DOCS=1');
  });

  it('documents every registered name', () => {
    const text = docsText();
    for (const f of allFunctions()) assert.ok(text.includes(`| \`${f.name}\``), `${f.name} is not documented`);
  });

  it('has a sample call for every entry, named and typed as Microsoft’s analyzer does', () => {
    const mismatches: string[] = [];
    for (const f of allFunctions()) {
      if (f.origin === 'product') continue; // Kusto does not know the product's own names
      const sample = (f.kind === 'scalar' ? SCALAR_SAMPLES[f.name] : undefined) ?? SAMPLES[f.name];
      assert.ok(sample, `no sample call for ${f.name}`);
      const body = f.kind === 'aggregate' ? `T | summarize ${sample}` : `T | serialize | project ${sample}`;
      const query = (SETUP[f.name] ?? '') + body;
      let engine: string[];
      try {
        engine = engineColumns(query);
      } catch (err) {
        engine = [`error: ${(err as Error).message}`];
      }
      const kusto = kustoColumns(query, COLUMNS);
      if (engine.join() !== kusto.join()) mismatches.push(`${query}: engine ${engine.join()} / Kusto ${kusto.join()}`);
    }
    assert.deepEqual(mismatches, []);
  });

  it('completions offer registered functions and no others', () => {
    const q = 'T | extend ';
    const items = parseQuery(q, CATALOG, q.length).suggestions?.autoCompletions ?? [];
    const offered = items
      .filter((c) => c.completionType === 'BuiltInFunction' || c.completionType === 'AggregateFunction')
      .map((c) => (/^[\w-]+/.exec(c.value)?.[0] ?? c.value).toLowerCase());
    const registered = new Set(allFunctions().map((f) => f.name));
    for (const name of offered) assert.ok(registered.has(name), `${name} offered but not registered`);
    for (const name of ['strlen', 'iff', 'bin', 'format_datetime']) assert.ok(offered.includes(name), `${name} not offered`);
  });

  it('refuses an unregistered function by name, and an aggregate outside summarize', () => {
    assert.throws(() => bindQuery('T | extend series_outliers(d)', CATALOG), /series_outliers/);
    assert.throws(() => bindQuery('T | extend dcount(s)', CATALOG), /aggregate 'dcount' is only allowed in summarize/);
  });
});
