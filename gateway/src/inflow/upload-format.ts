import { Readable } from 'node:stream';
import { StrataError } from '@strata/common';

/**
 * Which delimiter a file upload (`POST /inflow/{accountId}/{schema}/{ext}`, logsh `upload`) is
 * read with. logsh sends any file with its extension in the path and `text/csv`,
 * `text/tab-separated-values` or `application/octet-stream`. The rule, first match wins:
 * 1. the extension: `csv` → comma; `tsv` or `tab` → tab;
 * 2. the Content-Type: `text/csv` (or `application/csv`) → comma; `text/tab-separated-values` → tab;
 * 3. the first line (the header): a tab in it → tab; otherwise comma (a one-column file reads
 *    the same either way). A first line that starts with `{` or `[` is JSON, which this route does
 *    not read: the answer (400) points to the JSON inflow route.
 */
export type Delimiter = ',' | '\t';

export function delimiterOfExtension(ext: string): Delimiter | undefined {
  const e = ext.toLowerCase();
  if (e === 'csv') return ',';
  if (e === 'tsv' || e === 'tab') return '\t';
  return undefined;
}

export function delimiterOfContentType(contentType: string): Delimiter | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'text/csv' || type === 'application/csv') return ',';
  if (type === 'text/tab-separated-values') return '\t';
  return undefined;
}

export function delimiterOfFirstLine(line: string): Delimiter {
  const start = line.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('{') || start.startsWith('['))
    throw new StrataError(
      'invalid',
      'The file looks like JSON; file uploads read CSV or TSV. Send JSON entries to PUT /inflow/{accountId}.',
    );
  return line.includes('\t') ? '\t' : ',';
}

/**
 * Reads `input` up to its first line break (or `maxBytes`, or the end) and returns that line with
 * a stream that replays everything read so far followed by the rest: nothing is lost or buffered
 * beyond the first line.
 */
export async function peekFirstLine(input: Readable, maxBytes: number): Promise<{ firstLine: string; stream: Readable }> {
  const seen: Buffer[] = [];
  let size = 0;
  const iterator = input[Symbol.asyncIterator]();
  let done = false;
  while (size < maxBytes) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value as string);
    seen.push(chunk);
    size += chunk.length;
    if (chunk.includes(0x0a)) break;
  }
  const head = Buffer.concat(seen);
  const newline = head.indexOf(0x0a);
  const firstLine = head.subarray(0, newline === -1 ? head.length : newline).toString('utf8');
  async function* replay() {
    if (head.length > 0) yield head;
    if (done) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value as Buffer;
    }
  }
  return { firstLine, stream: Readable.from(replay(), { objectMode: false }) };
}
