/**
 * The series functions (issue 17, family 6) over the arrays make-series builds: element-wise
 * arithmetic and comparison, element-wise math, reductions, filling, FIR/IIR filters, statistics
 * and the line fit. They run as JS functions inside DuckDB (common/src/query/series-udfs.ts, the
 * semantics in series-math.ts), registered on every worker and on the gateway's merge database,
 * so a result does not depend on where it is computed. Kusto functions whose exact answers are not
 * documented (series_outliers' percentile method, series_decompose*, series_periods_*,
 * series_fit_2lines, series_fit_poly, series_fft) are not registered, so they are refused by name.
 */
import { queryError } from '../../errors.js';
import { type Sql, sql, str } from '../../sql/sql.js';
import type { Bound } from '../bound.js';
import { arity, type CallExpr } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

/** A series argument as JSON text; a number is accepted where Kusto takes a scalar for a series. */
function seriesArg(b: Bound, call: CallExpr, scalarOk: boolean): Sql {
  if (b.type === 'dynamic') return sql`CAST(${b.sql} AS VARCHAR)`;
  if (scalarOk && (b.type === 'long' || b.type === 'real')) return sql`CAST(to_json(${b.sql}) AS VARCHAR)`;
  if (b.value !== undefined && b.value.value === null) return sql`CAST(NULL AS VARCHAR)`;
  throw queryError(
    `The arguments of '${call.name}' must be dynamic arrays${scalarOk ? ' or numbers' : ''}; this is a ${b.type}.`,
    b.span,
  );
}

/** A number (or null) argument as JSON text: placeholders and fill constants. */
function numberArg(b: Bound | undefined, call: CallExpr, what: string, dflt: Sql): Sql {
  if (!b) return dflt;
  if (b.value !== undefined && b.value.value === null) return sql`CAST(NULL AS VARCHAR)`;
  if (b.type !== 'long' && b.type !== 'real')
    throw queryError(`The ${what} of '${call.name}' must be a number; this is a ${b.type}.`, b.span);
  return sql`CAST(to_json(${b.sql}) AS VARCHAR)`;
}

function boolArg(b: Bound | undefined, call: CallExpr, what: string, dflt: Sql): Sql {
  if (!b) return dflt;
  if (b.type !== 'bool') {
    if (b.value !== undefined && b.value.value === null) return sql`CAST(NULL AS BOOLEAN)`;
    throw queryError(`The ${what} of '${call.name}' must be a bool; this is a ${b.type}.`, b.span);
  }
  return b.sql;
}

const dynamicResult = (s: Sql, call: CallExpr): Bound => ({ type: 'dynamic', sql: sql`CAST(${s} AS JSON)`, span: call.span });
const realResult = (s: Sql, call: CallExpr): Bound => ({ type: 'real', sql: s, span: call.span });

const elementwise =
  (op: string): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 2);
    const [a, b] = args.map((x) => seriesArg(x, call, true)) as [Sql, Sql];
    return dynamicResult(sql`kql_series_elementwise(${str(op)}, ${a}, ${b})`, call);
  };

const unary =
  (op: string): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 1);
    return dynamicResult(sql`kql_series_unary(${str(op)}, ${seriesArg(args[0] as Bound, call, false)})`, call);
  };

const reduce =
  (op: 'sum' | 'magnitude'): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 1);
    return realResult(sql`kql_series_reduce(${str(op)}, ${seriesArg(args[0] as Bound, call, false)})`, call);
  };

const pair =
  (op: 'dot_product' | 'cosine_similarity' | 'pearson_correlation'): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 2);
    const scalarOk = op !== 'pearson_correlation';
    const [a, b] = args.map((x) => seriesArg(x, call, scalarOk)) as [Sql, Sql];
    return realResult(sql`kql_series_pair(${str(op)}, ${a}, ${b})`, call);
  };

const NULL_TEXT = sql`CAST(NULL AS VARCHAR)`;

const fill =
  (kind: 'forward' | 'backward' | 'const' | 'linear'): ScalarFn =>
  (args, call) => {
    const series = () => seriesArg(args[0] as Bound, call, false);
    const run = (placeholder: Sql, constant: Sql, edges: Sql) =>
      dynamicResult(sql`kql_series_fill(${str(kind)}, ${series()}, ${placeholder}, ${constant}, ${edges})`, call);
    switch (kind) {
      case 'forward':
      case 'backward':
        arity(call, args.length, 1, 2);
        return run(numberArg(args[1], call, 'missing value placeholder', NULL_TEXT), NULL_TEXT, sql`true`);
      case 'const':
        arity(call, args.length, 2, 3);
        return run(
          numberArg(args[2], call, 'missing value placeholder', NULL_TEXT),
          numberArg(args[1], call, 'constant', NULL_TEXT),
          sql`true`,
        );
      case 'linear':
        arity(call, args.length, 1, 4);
        return run(
          numberArg(args[1], call, 'missing value placeholder', NULL_TEXT),
          numberArg(args[3], call, 'constant value', sql`'0'`),
          boolArg(args[2], call, 'fill_edges flag', sql`true`),
        );
    }
  };

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  series_fir: (args, call) => {
    arity(call, args.length, 2, 4);
    const normalize = boolArg(args[2], call, 'normalize flag', sql`CAST(NULL AS BOOLEAN)`);
    const center = boolArg(args[3], call, 'center flag', sql`false`);
    const [s, f] = [seriesArg(args[0] as Bound, call, false), seriesArg(args[1] as Bound, call, false)];
    return dynamicResult(sql`kql_series_fir(${s}, ${f}, ${normalize}, ${center})`, call);
  },
  series_iir: (args, call) => {
    arity(call, args.length, 3);
    const [s, b, a] = args.map((x) => seriesArg(x, call, false)) as [Sql, Sql, Sql];
    return dynamicResult(sql`kql_series_iir(${s}, ${b}, ${a})`, call);
  },
  series_stats_dynamic: (args, call) => {
    arity(call, args.length, 1, 2);
    const ignore = boolArg(args[1], call, 'ignore_nonfinite flag', sql`false`);
    return dynamicResult(sql`kql_series_stats(${seriesArg(args[0] as Bound, call, false)}, ${ignore})`, call);
  },
  series_fit_line_dynamic: (args, call) => {
    arity(call, args.length, 1);
    return dynamicResult(sql`kql_series_fit_line(${seriesArg(args[0] as Bound, call, false)})`, call);
  },
};

const wholeItemOnly =
  (name: string): ScalarFn =>
  (_args, call) => {
    throw queryError(
      `'${name}' gives several columns: use it as a whole item of extend or project (\`(a, b, …) = ${name}(…)\` names them), or ${name}_dynamic for one dynamic value.`,
      call.span,
    );
  };

const NONE: NamingRule = { kind: 'none' };
const FIRST: NamingRule = { kind: 'first-argument' };

const entry = (
  name: string,
  signature: string,
  returns: string,
  bind: ScalarFn,
  naming: NamingRule = NONE,
): ScalarFunctionEntry => ({
  kind: 'scalar',
  name,
  signatures: [signature],
  returns,
  naming,
  bind,
});

const ELEMENTWISE_DOC: [string, string][] = [
  ['add', 'x + y'],
  ['subtract', 'x − y'],
  ['multiply', 'x × y'],
  ['divide', 'x ÷ y, always real (x/0 gives ±Infinity or NaN)'],
  ['pow', 'x to the power y, real'],
  ['greater', 'x > y (bool)'],
  ['greater_equals', 'x ≥ y (bool)'],
  ['less', 'x < y (bool)'],
  ['less_equals', 'x ≤ y (bool)'],
  ['equals', 'x == y (bool)'],
  ['not_equals', 'x != y (bool)'],
];

const UNARY_DOC: [string, string][] = [
  ['abs', 'absolute value'],
  ['sign', 'sign (−1, 0, 1)'],
  ['ceiling', 'smallest integer ≥ x'],
  ['floor', 'largest integer ≤ x'],
  ['acos', 'arc cosine'],
  ['asin', 'arc sine'],
  ['atan', 'arc tangent'],
  ['cos', 'cosine'],
  ['sin', 'sine'],
  ['tan', 'tangent'],
  ['exp', 'e to the power x'],
  ['log', 'natural logarithm'],
];

export const SERIES_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  ...ELEMENTWISE_DOC.map(([op, what]) =>
    entry(
      `series_${op}`,
      `series_${op}(series1: dynamic|number, series2: dynamic|number): dynamic`,
      `dynamic: element-wise ${what}; as long as the longer series, null where an element is missing or not numeric`,
      elementwise(op),
    ),
  ),
  ...UNARY_DOC.map(([op, what]) =>
    entry(
      `series_${op}`,
      `series_${op}(series: dynamic): dynamic`,
      `dynamic: element-wise ${what}; null for non-numeric elements`,
      unary(op),
    ),
  ),
  entry('series_sum', 'series_sum(series: dynamic): real', 'real: the sum of the numeric elements', reduce('sum')),
  entry(
    'series_magnitude',
    'series_magnitude(series: dynamic): real',
    'real: the square root of the sum of squares of the numeric elements',
    reduce('magnitude'),
  ),
  entry(
    'series_dot_product',
    'series_dot_product(series1: dynamic|number, series2: dynamic|number): real',
    'real: Σ x·y, the shorter series padded with zeros',
    pair('dot_product'),
  ),
  entry(
    'series_cosine_similarity',
    'series_cosine_similarity(series1: dynamic|number, series2: dynamic|number): real',
    'real: x·y / (|x|·|y|), the shorter series padded with zeros',
    pair('cosine_similarity'),
  ),
  entry(
    'series_pearson_correlation',
    'series_pearson_correlation(series1: dynamic, series2: dynamic): real',
    'real: Pearson’s correlation coefficient; null for series of different lengths',
    pair('pearson_correlation'),
  ),
  entry(
    'series_fill_forward',
    'series_fill_forward(series: dynamic[, missing_value_placeholder: number]): dynamic',
    'dynamic: each missing element takes the last present value before it (leading ones stay)',
    fill('forward'),
    FIRST,
  ),
  entry(
    'series_fill_backward',
    'series_fill_backward(series: dynamic[, missing_value_placeholder: number]): dynamic',
    'dynamic: each missing element takes the next present value after it (trailing ones stay)',
    fill('backward'),
    FIRST,
  ),
  entry(
    'series_fill_const',
    'series_fill_const(series: dynamic, constant_value: number[, missing_value_placeholder: number]): dynamic',
    'dynamic: each missing element becomes constant_value',
    fill('const'),
    FIRST,
  ),
  entry(
    'series_fill_linear',
    'series_fill_linear(series: dynamic[, missing_value_placeholder: number[, fill_edges: bool[, constant_value: number]]]): dynamic',
    'dynamic: missing elements interpolated linearly (the fraction dropped when every present element is a long); edges take the nearest value unless fill_edges is false; an all-missing series becomes constant_value (default 0)',
    fill('linear'),
    FIRST,
  ),
  entry(
    'series_fir',
    'series_fir(series: dynamic, filter: dynamic[, normalize: bool[, center: bool]]): dynamic',
    'dynamic: the finite impulse response filter applied (normalized by default unless a coefficient is negative)',
    IMPLEMENTATIONS.series_fir as ScalarFn,
    FIRST,
  ),
  entry(
    'series_iir',
    'series_iir(series: dynamic, numerators: dynamic, denominators: dynamic): dynamic',
    'dynamic: the infinite impulse response filter applied',
    IMPLEMENTATIONS.series_iir as ScalarFn,
    FIRST,
  ),
  {
    ...entry(
      'series_stats',
      'series_stats(series: dynamic[, ignore_nonfinite: bool])',
      'seven columns: min (real), min_idx (long), max (real), max_idx (long), avg, stdev, variance (real); only as a whole extend/project item',
      wholeItemOnly('series_stats'),
      { kind: 'own', describe: 'series_stats_<argument>_<field>; a name given names the first column' },
    ),
    columns: {
      bag: IMPLEMENTATIONS.series_stats_dynamic as ScalarFn,
      fields: [
        { name: 'min', type: 'real' },
        { name: 'min_idx', type: 'long' },
        { name: 'max', type: 'real' },
        { name: 'max_idx', type: 'long' },
        { name: 'avg', type: 'real' },
        { name: 'stdev', type: 'real' },
        { name: 'variance', type: 'real' },
      ],
    },
  },
  {
    ...entry(
      'series_fit_line',
      'series_fit_line(series: dynamic)',
      'six columns: rsquare, slope, variance, rvariance, interception (real), line_fit (dynamic); only as a whole extend/project item',
      wholeItemOnly('series_fit_line'),
      { kind: 'own', describe: 'series_fit_line_<argument>_<field>; a name given names the first column' },
    ),
    columns: {
      bag: IMPLEMENTATIONS.series_fit_line_dynamic as ScalarFn,
      fields: [
        { name: 'rsquare', type: 'real' },
        { name: 'slope', type: 'real' },
        { name: 'variance', type: 'real' },
        { name: 'rvariance', type: 'real' },
        { name: 'interception', type: 'real' },
        { name: 'line_fit', type: 'dynamic' },
      ],
    },
  },
  entry(
    'series_stats_dynamic',
    'series_stats_dynamic(series: dynamic[, ignore_nonfinite: bool]): dynamic',
    'dynamic: {min, min_idx, max, max_idx, avg, stdev, variance} (sample stdev/variance)',
    IMPLEMENTATIONS.series_stats_dynamic as ScalarFn,
  ),
  entry(
    'series_fit_line_dynamic',
    'series_fit_line_dynamic(series: dynamic): dynamic',
    'dynamic: {rsquare, slope, variance, rvariance, interception, line_fit} of the least-squares line over x = 1…n',
    IMPLEMENTATIONS.series_fit_line_dynamic as ScalarFn,
  ),
];
