/**
 * Writes a query answer as its JSON body straight from the result columns. Building one object
 * per row and handing them to JSON.stringify cost about twice as much, and most of the garbage,
 * for answers of thousands of rows. The text is exactly JSON.stringify(resultRows(result)) (the
 * tests compare them); where an object would behave specially (repeated or `__proto__` column
 * names) that path is taken.
 */
import { type ColumnarResult, resultRows } from './executor.js';
import { formatValue, resultColumns } from './result-format.js';

function valueJson(v: unknown): string {
  return v === null ? 'null' : (JSON.stringify(v) as string);
}

export function queryResultJson(c: ColumnarResult): string {
  const names = c.columns.map((col) => col.name);
  if (new Set(names).size !== names.length || names.includes('__proto__')) return JSON.stringify(resultRows(c));
  const keys = names.map((n, i) => `${i === 0 ? '{' : ','}${JSON.stringify(n)}:`);
  const parts: string[] = [
    `{"header":${JSON.stringify(names)},"columns":${JSON.stringify(resultColumns(c.columns))},"results":[`,
  ];
  const width = c.columns.length;
  for (let r = 0; r < c.rowCount; r++) {
    let row = r === 0 ? '' : ',';
    for (let i = 0; i < width; i++) {
      row += keys[i] as string;
      row += valueJson(formatValue((c.columns[i] as ColumnarResult['columns'][number]).type, (c.values[i] as unknown[])[r]));
    }
    parts.push(width === 0 ? `${row}{}` : `${row}}`);
  }
  parts.push(`],"truncated":${c.truncated}`);
  if (c.render) parts.push(`,"render":${JSON.stringify(c.render)}`);
  parts.push('}');
  return parts.join('');
}
