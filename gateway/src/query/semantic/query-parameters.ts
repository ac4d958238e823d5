/**
 * Values for `declare query_parameters(name:type [= default], …)` from the request's
 * `variables` (`[{ id, type?, value }]`, the Logship clients' shape). A value must read as the
 * declared type; anything else is a 400 naming the parameter, never a silent null.
 */
import { encodeDecimal, sqlDecimal } from '@strata/common';
import { queryError } from '../errors.js';
import type { LiteralValue, QueryParameter } from '../syntax/ast.js';
import {
  hasSubMicrosecondDigits,
  parseBoolLiteral,
  parseDateTimeText,
  parseGuidLiteral,
  parseLongLiteral,
  parseRealLiteral,
  parseTimespanLiteral,
  subMicrosecondMessage,
  tickDigit,
} from '../syntax/literals.js';

/** The request's variables as a map by id; malformed entries are left out. */
export function variablesById(variables: unknown): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!Array.isArray(variables)) return out;
  for (const v of variables) {
    if (v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string' && 'value' in v) {
      out.set((v as { id: string }).id, (v as { value: unknown }).value);
    }
  }
  return out;
}

/** The literal a parameter takes from a JSON value. */
export function parameterLiteral(p: QueryParameter, value: unknown): LiteralValue {
  const bad = () => queryError(`The value of the query parameter '${p.name}' is not a ${p.type}.`, p.span);
  const text =
    typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
  if (value === null) return { type: p.type, value: null } as LiteralValue;
  switch (p.type) {
    case 'string':
      if (typeof value !== 'string') throw bad();
      return { type: 'string', value };
    case 'long': {
      const v = text === undefined ? undefined : parseLongLiteral(text);
      if (v === undefined) throw bad();
      return { type: 'long', value: v };
    }
    case 'real': {
      const v = typeof value === 'number' ? value : text === undefined ? undefined : parseRealLiteral(text);
      if (v === undefined) throw bad();
      return { type: 'real', value: v };
    }
    case 'decimal': {
      // SqlDecimal.Parse of the text (a JSON number as JavaScript writes it, exponent included).
      const v = text === undefined || typeof value === 'boolean' ? undefined : sqlDecimal.parseLiteral(text);
      if (v === undefined) throw bad();
      return { type: 'decimal', value: encodeDecimal(v) };
    }
    case 'bool': {
      const v = typeof value === 'boolean' ? value : text === undefined ? undefined : parseBoolLiteral(text);
      if (v === undefined) throw bad();
      return { type: 'bool', value: v };
    }
    case 'datetime': {
      if (typeof value === 'string' && hasSubMicrosecondDigits(value)) throw queryError(subMicrosecondMessage(value), p.span);
      const v = typeof value === 'string' ? parseDateTimeText(value) : undefined;
      if (v === undefined) throw bad();
      const tick = typeof value === 'string' ? tickDigit(value) : 0;
      return tick ? { type: 'datetime', value: v, tick } : { type: 'datetime', value: v };
    }
    case 'timespan': {
      const v = typeof value === 'string' ? parseTimespanLiteral(value) : undefined;
      if (v === undefined) throw bad();
      return { type: 'timespan', value: v };
    }
    case 'guid': {
      const v = typeof value === 'string' ? parseGuidLiteral(value) : undefined;
      if (v === undefined) throw bad();
      return { type: 'guid', value: v };
    }
    case 'dynamic':
      return { type: 'dynamic', value: JSON.stringify(value) };
  }
}
