// Prints the code point ranges DuckDB's RE2 counts as term characters, `[\p{L}\p{N}]`, in the form
// common/src/query/term-chars.ts stores them (TERM_CHAR_RANGES, and the code points `(?i)` adds).
// Run after a DuckDB upgrade if common/test/query/term-match.test.ts reports a difference:
//
//   node common/scripts/term-chars.mjs
import { DuckDBInstance } from '@duckdb/node-api';

/** Code points (surrogates are not text) that the class does not match, i.e. term characters. */
const termSql = (flags) =>
  `SELECT cp FROM (SELECT range AS cp FROM range(0, 55296) UNION ALL SELECT range FROM range(57344, 1114112))
    WHERE NOT regexp_matches(chr(cp::INTEGER), '${flags}^[^\\p{L}\\p{N}]$') ORDER BY cp`;

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const read = async (flags) => (await conn.runAndReadAll(termSql(flags))).getRows().map(([cp]) => Number(cp));
const plain = await read('');
const folded = await read('(?i)');
const ranges = [];
for (const cp of plain) {
  const last = ranges[ranges.length - 1];
  if (last && last[1] === cp - 1) last[1] = cp;
  else ranges.push([cp, cp]);
}
const text = ranges.map(([a, b]) => (a === b ? a.toString(16) : `${a.toString(16)}-${b.toString(16)}`)).join(' ');
const lines = [];
for (let i = 0; i < text.length; ) {
  let end = Math.min(text.length, i + 96);
  if (end < text.length) end = text.lastIndexOf(' ', end) + 1;
  lines.push(`  '${text.slice(i, end)}' +`);
  i = end;
}
const plainSet = new Set(plain);
console.log(`const TERM_CHAR_RANGES =\n${lines.join('\n').replace(/ \+$/, ';')}`);
console.log(
  `const FOLDED_EXTRA = [${folded
    .filter((cp) => !plainSet.has(cp))
    .map((cp) => `0x${cp.toString(16)}`)
    .join(', ')}];`,
);
console.log(
  `// plain ${plain.length} code points in ${ranges.length} ranges; (?i) ${folded.length}; dropped by (?i): ${plain.filter((cp) => !new Set(folded).has(cp)).length}`,
);
conn.closeSync();
instance.closeSync();
