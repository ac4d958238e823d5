/**
 * A `toscalar()` subquery: a tabular expression whose first value the query uses as a constant.
 * The plan runs it first (its own worker fragments and merge), then the value fills a bound
 * parameter that the query's statements already reference — the value reaches DuckDB as a
 * parameter, never as SQL text, and the query's columns and types are known before it runs.
 */
import type { ParamValue } from '@strata/common';
import { Param, type Sql, sql } from '../sql/sql.js';
import type { KqlType } from '../types.js';
import type { Column, Rel } from './rel.js';

/** A parameter whose value is set once its subquery has run (before any statement using it). */
export interface DeferredParam {
  type: ParamValue['type'];
  value: ParamValue['value'];
}

export interface ScalarQuery {
  rel: Rel;
  /** The column whose first value is the scalar. */
  column: Column;
  /** The parameter the statements reference; its value is set when the subquery has run. */
  target: DeferredParam;
  /** The SQL standing for the value in the query. */
  sql: Sql;
}

/** How a value of each type travels as a parameter (readable result form = parameter form). */
const PARAM_TYPE: Record<KqlType, ParamValue['type']> = {
  string: 'VARCHAR',
  long: 'BIGINT',
  real: 'DOUBLE',
  decimal: 'VARCHAR',
  bool: 'BOOLEAN',
  datetime: 'TIMESTAMP',
  timespan: 'BIGINT',
  guid: 'VARCHAR',
  dynamic: 'VARCHAR',
};

export function scalarQuery(rel: Rel, column: Column): ScalarQuery {
  const target: DeferredParam = { type: PARAM_TYPE[column.type], value: null };
  const p = new Param(target);
  let value: Sql;
  switch (column.type) {
    case 'guid':
      value = sql`CAST(${p} AS UUID)`;
      break;
    case 'dynamic':
      value = sql`CAST(${p} AS JSON)`;
      break;
    default:
      value = sql`CAST(${p} AS ${sqlTypeOf(target.type)})`;
  }
  return { rel, column, target, sql: value };
}

function sqlTypeOf(type: ParamValue['type']): Sql {
  switch (type) {
    case 'VARCHAR':
      return sql`VARCHAR`;
    case 'BIGINT':
      return sql`BIGINT`;
    case 'DOUBLE':
      return sql`DOUBLE`;
    case 'BOOLEAN':
      return sql`BOOLEAN`;
    case 'TIMESTAMP':
      return sql`TIMESTAMP`;
    default:
      throw new Error(`no SQL type for ${type}`);
  }
}

/**
 * The parameter value from the subquery's first row (readable form: datetimes as µs, timespans
 * as ticks, guid and dynamic as text); null without rows, except a string, which is never null.
 */
export function scalarValue(type: KqlType, value: unknown): ParamValue['value'] {
  if (value === null || value === undefined) return type === 'string' ? '' : null;
  if (type === 'long' || type === 'timespan' || type === 'datetime') return BigInt(value as bigint | number);
  return value as ParamValue['value'];
}
