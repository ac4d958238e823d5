/**
 * Writes a query answer as its JSON body straight from the result columns. Building one object
 * per row and handing them to JSON.stringify cost about twice as much, and most of the garbage,
 * for answers of thousands of rows. The text is exactly JSON.stringify(resultRows(result)) (the
 * tests compare them); where an object would behave specially (repeated or `__proto__` column
 * names) that path is taken.
 */
import type { KqlType } from '../types.js';
import { type ColumnarResult, resultRows } from './executor.js';
import { formatDateTime, formatTimespan, formatValue, resultColumns } from './result-format.js';

const NULL = 'null';

/**
 * The JSON text of each value of one column, with the formatting of formatValue: per type, the
 * shortest way that gives JSON.stringify's text (numbers need no escaping, DateTime and TimeSpan
 * texts hold only digits and `-:.TZ`), so strings alone pay for JSON.stringify.
 */
function columnJson(type: KqlType, values: readonly unknown[], rowCount: number): string[] {
  const out = new Array<string>(rowCount);
  for (let r = 0; r < rowCount; r++) {
    const raw = values[r];
    if (raw === null || raw === undefined) {
      out[r] = type === 'string' ? '""' : NULL;
      continue;
    }
    switch (type) {
      case 'string':
        out[r] = JSON.stringify(String(raw));
        break;
      case 'long':
        // Int64 values are finite as doubles, so String() is JSON.stringify's text.
        out[r] = String(Number(raw as bigint));
        break;
      case 'real': {
        const n = Number(raw);
        out[r] = Number.isFinite(n) ? String(n) : Number.isNaN(n) ? '"NaN"' : n > 0 ? '"Infinity"' : '"-Infinity"';
        break;
      }
      case 'bool':
        out[r] = raw ? 'true' : 'false';
        break;
      case 'datetime':
        out[r] = `"${formatDateTime(typeof raw === 'bigint' ? raw : BigInt(raw as number))}"`;
        break;
      case 'timespan':
        out[r] = `"${formatTimespan(typeof raw === 'bigint' ? raw : BigInt(raw as number))}"`;
        break;
      default:
        out[r] = JSON.stringify(formatValue(type, raw)) as string;
    }
  }
  return out;
}

export function queryResultJson(c: ColumnarResult): string {
  const names = c.columns.map((col) => col.name);
  if (new Set(names).size !== names.length || names.includes('__proto__')) return JSON.stringify(resultRows(c));
  const keys = names.map((n, i) => `${i === 0 ? '{' : ','}${JSON.stringify(n)}:`);
  const parts: string[] = [
    `{"header":${JSON.stringify(names)},"columns":${JSON.stringify(resultColumns(c.columns))},"results":[`,
  ];
  const width = c.columns.length;
  const texts = c.columns.map((col, i) => columnJson(col.type, (c.values[i] ?? []) as unknown[], c.rowCount));
  for (let r = 0; r < c.rowCount; r++) {
    let row = r === 0 ? '' : ',';
    for (let i = 0; i < width; i++) row += (keys[i] as string) + ((texts[i] as string[])[r] as string);
    parts.push(width === 0 ? `${row}{}` : `${row}}`);
  }
  parts.push(`],"truncated":${c.truncated}`);
  if (c.render) parts.push(`,"render":${JSON.stringify(c.render)}`);
  parts.push('}');
  return parts.join('');
}
