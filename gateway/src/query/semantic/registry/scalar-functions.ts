/**
 * Every scalar function the engine knows, declared once: Kusto-style signatures, the return type
 * rule, the naming rule of an unnamed result column, and the implementation (scalar-impl.ts).
 * Names that are only the product's (Logship's) own are marked `origin: 'product'`.
 */
import { DATETIME_FUNCTIONS } from './datetime-functions.js';
import { DECIMAL_FUNCTIONS } from './decimal-functions.js';
import { DYNAMIC_FUNCTIONS } from './dynamic-functions.js';
import { DYNAMIC_RESHAPE_FUNCTIONS } from './dynamic-reshape-functions.js';
import { GEO_FUNCTIONS } from './geo-functions.js';
import { HASH_FUNCTIONS } from './hash-functions.js';
import { IP_FUNCTIONS } from './ip-functions.js';
import { IPV6_FUNCTIONS } from './ipv6-functions.js';
import { MATH_FUNCTIONS } from './math-functions.js';
import { ROW_FUNCTIONS } from './row-functions.js';
import { SCALAR_IMPLEMENTATIONS as F } from './scalar-impl.js';
import { SERIES_FUNCTIONS } from './series-functions.js';
import { SKETCH_FUNCTIONS } from './sketch-functions.js';
import { STRING_FUNCTIONS } from './string-functions.js';
import { TEXT_PARSING_FUNCTIONS } from './text-parsing-functions.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

const NONE: NamingRule = { kind: 'none' };
const FIRST: NamingRule = { kind: 'first-argument' };

function fn(
  name: string,
  signatures: string[],
  returns: string,
  naming: NamingRule = NONE,
  origin?: ScalarFunctionEntry['origin'],
): ScalarFunctionEntry {
  const bind = F[name];
  if (!bind) throw new Error(`no implementation for the scalar function ${name}`);
  return { kind: 'scalar', name, signatures, returns, naming, bind, ...(origin ? { origin } : {}) };
}

const conversion = (name: string, type: string, origin?: ScalarFunctionEntry['origin']) =>
  fn(
    name,
    [`${name}(value: any): ${type}`],
    type === 'string'
      ? 'string (never null)'
      : type === 'dynamic'
        ? 'dynamic: JSON text parsed; other text a dynamic string holding it ("" null)'
        : type === 'datetime'
          ? 'datetime (a 7th fractional digit kept); null when the value does not convert'
          : `${type}; null when the value does not convert`,
    FIRST,
    origin,
  );

export const SCALAR_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn('ago', ['ago(span: timespan): datetime'], 'datetime: now() minus the span; a number means seconds (product form)'),
  fn('now', ['now([offset: timespan]): datetime'], 'datetime: one value for the whole query'),
  fn(
    'bin',
    ['bin(value: long|real|datetime|timespan, size: long|real|timespan)'],
    'the type of value (real when either side is real); datetimes count from 0001-01-01',
    FIRST,
  ),
  fn('floor', ['floor(value: long|real)', 'floor(value, size)'], 'as bin with a size, else the type of value', FIRST),
  conversion('todatetime', 'datetime'),
  conversion('datetime', 'datetime', 'alias'),
  conversion('tostring', 'string'),
  fn(
    'toint',
    ['toint(value: any): int'],
    'int (a long in the 32-bit range, reported as int); null when the value does not convert or falls outside it',
    FIRST,
  ),
  conversion('tolong', 'long'),
  conversion('todouble', 'real'),
  conversion('toreal', 'real'),
  conversion('tobool', 'bool'),
  conversion('toboolean', 'bool'),
  conversion('toguid', 'guid'),
  conversion('totimespan', 'timespan'),
  conversion('parse_json', 'dynamic'),
  conversion('todynamic', 'dynamic'),
  conversion('json', 'dynamic', 'product'),
  fn('strlen', ['strlen(source: string): long'], 'long', { kind: 'prefix', prefix: 'strlen' }),
  fn('substring', ['substring(source: string, start: long[, length: long]): string'], 'string'),
  fn('tolower', ['tolower(value: string): string'], 'string'),
  fn('toupper', ['toupper(value: string): string'], 'string'),
  fn('strcat', ['strcat(value: any, ...): string'], 'string (1 to 64 arguments)'),
  fn(
    'extract',
    ['extract(regex: string, group: long, source: string[, typeof(T)])'],
    'string ("" when nothing matches), or T with typeof(T) (null when nothing matches or it does not convert)',
  ),
  fn('iff', ['iff(condition: bool, then: T, else: T): T'], 'the common type of then and else'),
  fn('iif', ['iif(condition: bool, then: T, else: T): T'], 'the common type of then and else'),
  fn('case', ['case(condition: bool, value: T, ..., else: T): T'], 'the common type of the values'),
  fn('coalesce', ['coalesce(value: T, ...): T'], 'the common type; for strings the first non-empty value'),
  fn('notnull', ['notnull(value: T, default: T): T'], 'the common type: value, or default when value is null', NONE, 'product'),
  fn('isnull', ['isnull(value: any): bool'], 'bool (strings are never null)'),
  fn('isnotnull', ['isnotnull(value: any): bool'], 'bool'),
  fn('isempty', ['isempty(value: any): bool'], 'bool'),
  fn('isnotempty', ['isnotempty(value: any): bool'], 'bool'),
  fn('not', ['not(value: bool): bool'], 'bool'),
  fn('round', ['round(value: long|real[, digits: long])'], 'the type of value', FIRST),
  fn('abs', ['abs(value: long|real|timespan)'], 'the type of value', FIRST),
  fn('sqrt', ['sqrt(value: long|real): real'], 'real; null for negative values', FIRST),
  fn('startofday', ['startofday(date: datetime[, offset: long]): datetime'], 'datetime', FIRST),
  fn('startofweek', ['startofweek(date: datetime[, offset: long]): datetime'], 'datetime (weeks start on Sunday)'),
  fn('startofmonth', ['startofmonth(date: datetime[, offset: long]): datetime'], 'datetime'),
  fn('datetime_part', ['datetime_part(part: string, date: datetime): int'], 'int (a long reported as int, as Kusto types it)'),
  fn('format_datetime', ['format_datetime(date: datetime, format: string): string'], 'string', FIRST),
  ...DYNAMIC_FUNCTIONS,
  ...DYNAMIC_RESHAPE_FUNCTIONS,
  ...ROW_FUNCTIONS,
  ...STRING_FUNCTIONS,
  ...DATETIME_FUNCTIONS,
  ...MATH_FUNCTIONS,
  ...DECIMAL_FUNCTIONS,
  ...IP_FUNCTIONS,
  ...HASH_FUNCTIONS,
  ...IPV6_FUNCTIONS,
  ...GEO_FUNCTIONS,
  ...SKETCH_FUNCTIONS,
  ...TEXT_PARSING_FUNCTIONS,
  ...SERIES_FUNCTIONS,
];
