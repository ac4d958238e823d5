import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { StrataError } from '@strata/common';
import { delimitedChunks, delimitedValueType } from '../../src/inflow/delimited-batches.js';

async function collect(text: string | string[], options: { delimiter?: ',' | '\t'; maxChunkRows?: number } = {}) {
  const chunks = [];
  for await (const c of delimitedChunks(Readable.from(Array.isArray(text) ? text : [text]), {
    schema: 'S',
    delimiter: options.delimiter ?? ',',
    maxChunkRows: options.maxChunkRows,
  }))
    chunks.push(c);
  return chunks;
}

function rowsOf(chunk: { part: { rows: Buffer } }) {
  return chunk.part.rows
    .toString()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('CSV and TSV inflow', () => {
  it('infers value types', () => {
    assert.equal(delimitedValueType('42'), 'Int64');
    assert.equal(delimitedValueType('-9223372036854775808'), 'Int64');
    assert.equal(delimitedValueType('9223372036854775808'), 'Float64');
    assert.equal(delimitedValueType('007'), 'String');
    assert.equal(delimitedValueType('1.5e3'), 'Float64');
    assert.equal(delimitedValueType('TRUE'), 'Boolean');
    assert.equal(delimitedValueType('2024-01-01T00:00:00Z'), 'DateTime');
    assert.equal(delimitedValueType('1e999'), 'String');
    assert.equal(delimitedValueType('hello'), 'String');
  });

  it('types columns from the first row of values, quotes per RFC 4180, stamps arrival time', async () => {
    const before = Date.now() * 1000;
    const [chunk] = await collect(
      'host,count,ratio,ok,seen,note,big\n' +
        'web-1,3,0.5,true,2024-01-01T00:00:00Z,"a, ""quoted"" note",12345678901234567\n' +
        'web-2,4,1,False,2024-01-02T00:00:00+01:00,,-5\n',
    );
    assert.deepEqual(chunk!.part.columns, [
      { name: 'host', type: 'String' },
      { name: 'count', type: 'Int64' },
      { name: 'ratio', type: 'Float64' },
      { name: 'ok', type: 'Boolean' },
      { name: 'seen', type: 'DateTime' },
      { name: 'note', type: 'String' },
      { name: 'big', type: 'Int64' },
    ]);
    assert.equal(chunk!.firstLine, 2);
    const text = chunk!.part.rows.toString();
    assert.match(text, /"big":12345678901234567[,}]/, 'integers keep every digit');
    const rows = rowsOf(chunk!);
    assert.deepEqual(
      rows.map((r) => [r.host, r.count, r.ratio, r.ok, r.seen, r.note]),
      [
        ['web-1', 3, 0.5, true, Date.UTC(2024, 0, 1) * 1000, 'a, "quoted" note'],
        ['web-2', 4, 1, false, Date.UTC(2024, 0, 1, 23) * 1000, undefined],
      ],
    );
    assert.ok((rows[0]!['@ts'] as number) >= before && (rows[0]!['@ts'] as number) <= Date.now() * 1000);
  });

  it('widens a column whose later values do not fit, so nothing is dropped', async () => {
    const [chunk] = await collect('n,m\n1,1\n2.5,x\n');
    assert.deepEqual(chunk!.part.columns, [
      { name: 'n', type: 'Float64' },
      { name: 'm', type: 'String' },
    ]);
    assert.deepEqual(
      rowsOf(chunk!).map((r) => [r.n, r.m]),
      [
        [1, '1'],
        [2.5, 'x'],
      ],
    );
  });

  it('reads TSV and streams in chunks across input pieces', async () => {
    const pieces = ['a\tb\n', ...Array.from({ length: 25 }, (_, i) => `${i}\tv${i}\n`)];
    const chunks = await collect(pieces, { delimiter: '\t', maxChunkRows: 10 });
    assert.deepEqual(
      chunks.map((c) => [c.firstLine, c.part.rowCount]),
      [
        [2, 10],
        [12, 10],
        [22, 5],
      ],
    );
    assert.equal(rowsOf(chunks[2]!)[4]!.b, 'v24');
    assert.notEqual(chunks[0]!.contentHash, chunks[1]!.contentHash);
  });

  it('refuses bad headers, ragged rows and empty uploads with the line number', async () => {
    const refusal = async (text: string, pattern: RegExp) => {
      await assert.rejects(
        collect(text),
        (err: unknown) => err instanceof StrataError && err.kind === 'invalid' && pattern.test(err.message),
      );
    };
    await refusal('a,bad name\n1,2\n', /^Line 1: column name 'bad name'/);
    await refusal('a,timestamp\n1,2\n', /^Line 1: column name 'timestamp' is reserved/);
    await refusal('a,A\n1,2\n', /^Line 1: columns 'a' and 'A' differ only in case/);
    await refusal('a,b\n1,2\n3\n', /^Line 3: /);
    await refusal('a,b\n1,"unterminated\n', /^Line \d+: /);
    await refusal('', /empty/);
  });
});
