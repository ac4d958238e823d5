/**
 * The only way query SQL is written. A `Sql` node is a tagged template whose fixed text comes from
 * this code base and whose holes are other nodes, bound parameters or quoted identifiers, never
 * raw strings: user text can reach the database only as a parameter value or, for catalog column
 * and table names, through `ident()`, which quotes. `render()` numbers the parameters for one
 * statement, so the same fragment can be rendered into a worker statement and a gateway statement.
 */

import type { ParamValue, WireType } from '@strata/common';
import { quoteIdentifier } from '@strata/common';

/** DuckDB parameter types the engine binds. TIMESTAMP values are microseconds since the Unix epoch. */
export type ParamType = WireType;
export type { ParamValue };

export class Param {
  constructor(readonly p: ParamValue) {}
}

export class Ident {
  constructor(readonly name: string) {}
}

export type SqlPart = Sql | Param | Ident;

export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly SqlPart[],
  ) {}
}

export function sql(strings: TemplateStringsArray, ...values: SqlPart[]): Sql {
  for (const v of values) {
    if (!(v instanceof Sql || v instanceof Param || v instanceof Ident)) {
      // A programming error: a raw value was interpolated. Refuse rather than splice it.
      throw new TypeError('sql`` accepts only Sql, Param or Ident values');
    }
  }
  return new Sql([...strings], values);
}

export const param = (type: ParamType, value: ParamValue['value']): Param => new Param({ type, value });
export const str = (value: string): Param => param('VARCHAR', value);
export const int = (value: bigint | number): Param => param('BIGINT', BigInt(value));
export const dbl = (value: number): Param => param('DOUBLE', value);
export const bool = (value: boolean): Param => param('BOOLEAN', value);
/** A timestamp parameter from microseconds since the Unix epoch. */
export const ts = (micros: bigint): Param => param('TIMESTAMP', micros);

export const ident = (name: string): Ident => new Ident(name);

/** True when the SQL names a column (an Ident anywhere in it), i.e. its value can differ per row. */
export function readsColumns(s: Sql): boolean {
  return s.values.some((v) => v instanceof Ident || (v instanceof Sql && readsColumns(v)));
}

/** Joins parts with a separator taken from this code base (a comma, AND, UNION ALL …). */
export function join(parts: readonly SqlPart[], separator: ', ' | ' AND ' | ' OR ' | ' UNION ALL ' | ' '): Sql {
  if (parts.length === 0) return EMPTY;
  const strings = [''];
  for (let i = 1; i < parts.length; i++) strings.push(separator);
  strings.push('');
  return new Sql(strings, parts);
}

export const EMPTY = new Sql([''], []);

/** Whether `node` contains the identifier `marker` (the same object). */
export function contains(node: SqlPart, marker: Ident): boolean {
  if (node === marker) return true;
  return node instanceof Sql && node.values.some((v) => contains(v, marker));
}

/** `node` with every occurrence of the identifier `marker` (the same object) replaced. */
export function substitute(node: Sql, marker: Ident, replacement: Sql): Sql {
  if (!contains(node, marker)) return node;
  return new Sql(
    node.strings,
    node.values.map((v) => (v === marker ? replacement : v instanceof Sql ? substitute(v, marker, replacement) : v)),
  );
}

/**
 * SQL keywords and function names chosen by the engine from fixed tables (never from user text).
 * The argument type is a string literal union at the call sites that matter; `trusted` exists so
 * that such a choice is visible in review.
 */
export function trusted(text: string): Sql {
  return new Sql([text], []);
}

export interface RenderedSql {
  text: string;
  params: ParamValue[];
}

/** Renders a statement; parameters are numbered $1… in order of appearance. */
export function render(node: Sql): RenderedSql {
  const params: ParamValue[] = [];
  const out: string[] = [];
  const walk = (n: SqlPart): void => {
    if (n instanceof Param) {
      params.push(n.p);
      out.push(`$${params.length}`);
    } else if (n instanceof Ident) {
      out.push(quoteIdentifier(n.name));
    } else {
      for (let i = 0; i < n.strings.length; i++) {
        out.push(n.strings[i] as string);
        if (i < n.values.length) walk(n.values[i] as SqlPart);
      }
    }
  };
  walk(node);
  return { text: out.join(''), params };
}
