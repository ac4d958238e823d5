/**
 * Every aggregate the engine knows, declared once: Kusto-style signatures, the return type rule,
 * the naming rule of an unnamed result column, the value on empty input, and how it runs — a
 * partial state per worker and a merge at the gateway (aggregates.ts), so that the answer is the
 * same on one worker or many.
 */
import {
  type AggregateDef,
  argMaxDef,
  avgDef,
  countDef,
  countifDef,
  dcountDef,
  joinDef,
  makeListDef,
  minMax,
  percentileDef,
  sumDef,
  sumifDef,
  takeAnyDef,
  varianceDef,
} from '../aggregates.js';
import type { AggregateEntry, NamingRule } from './types.js';

function agg(
  name: string,
  signatures: string[],
  returns: string,
  empty: string,
  run: AggregateDef,
  naming: NamingRule = { kind: 'prefix', prefix: name },
  extra: Partial<Pick<AggregateEntry, 'multiColumn' | 'origin'>> = {},
): AggregateEntry {
  return { kind: 'aggregate', name, signatures, returns, empty, run, naming, ...extra };
}

const NULL = 'null';

export const AGGREGATE_FUNCTIONS: readonly AggregateEntry[] = [
  agg('count', ['count([value: any]): long'], 'long', '0', countDef),
  agg('countif', ['countif(predicate: bool): long'], 'long', '0', countifDef),
  agg('sum', ['sum(value: long|real|timespan)'], 'the type of value', NULL, sumDef),
  agg('sumif', ['sumif(value: long|real|timespan, predicate: bool)'], 'the type of value', NULL, sumifDef),
  agg('avg', ['avg(value: long|real|timespan)'], 'real (timespan for timespans)', NULL, avgDef),
  agg('min', ['min(value: T): T'], 'the type of value', NULL, minMax('min')),
  agg('max', ['max(value: T): T'], 'the type of value', NULL, minMax('max')),
  agg(
    'agg_min',
    ['agg_min(value: T): T'],
    'the type of value',
    NULL,
    minMax('min'),
    { kind: 'prefix', prefix: 'min' },
    {
      origin: 'product',
    },
  ),
  agg(
    'agg_max',
    ['agg_max(value: T): T'],
    'the type of value',
    NULL,
    minMax('max'),
    { kind: 'prefix', prefix: 'max' },
    {
      origin: 'product',
    },
  ),
  agg('dcount', ['dcount(value: any[, accuracy: long]): long'], 'long (exact)', '0', dcountDef),
  agg(
    'percentile',
    ['percentile(value: long|real|datetime|timespan, percentile: real)'],
    'the type of value (nearest rank, exact)',
    NULL,
    percentileDef(false),
    { kind: 'own', describe: 'percentile_value_P (`.` in P written as `_`)' },
  ),
  agg(
    'percentiles',
    ['percentiles(value: long|real|datetime|timespan, percentile: real, ...)'],
    'one column per percentile, of the type of value',
    NULL,
    percentileDef(true),
    { kind: 'own', describe: 'percentile_value_P for each P' },
    { multiColumn: true },
  ),
  agg(
    'arg_max',
    ['arg_max(maximized: T, column: any | *, ...)'],
    'the maximized value and the given columns from its row',
    NULL,
    argMaxDef('max'),
    { kind: 'own', describe: 'the maximized expression and each column by its own name' },
    { multiColumn: true },
  ),
  agg(
    'arg_min',
    ['arg_min(minimized: T, column: any | *, ...)'],
    'the minimized value and the given columns from its row',
    NULL,
    argMaxDef('min'),
    { kind: 'own', describe: 'the minimized expression and each column by its own name' },
    { multiColumn: true },
  ),
  agg('make_list', ['make_list(value: any[, maxSize: long]): dynamic'], 'dynamic array', '[]', makeListDef(false), {
    kind: 'prefix',
    prefix: 'list',
  }),
  agg(
    'make_set',
    ['make_set(value: any[, maxSize: long]): dynamic'],
    'dynamic array of distinct values',
    '[]',
    makeListDef(true),
    {
      kind: 'prefix',
      prefix: 'set',
    },
  ),
  agg('take_any', ['take_any(value: T): T'], 'the type of value', NULL, takeAnyDef, { kind: 'first-argument' }),
  agg('stdev', ['stdev(value: long|real): real'], 'real (sample standard deviation)', NULL, varianceDef('stdev')),
  agg('variance', ['variance(value: long|real): real'], 'real (sample variance)', NULL, varianceDef('variance')),
  agg('join', ['join(value: any, separator: string): string'], 'string', '""', joinDef, undefined, { origin: 'product' }),
];
