/**
 * String functions (issue 17, family 1), declared with their implementations. Every one here has
 * an exact DuckDB SQL form, so it runs the same on a worker and in the gateway's merge database
 * without a JS UDF. Kusto strings are never null: a null input reads as "" and a string result is
 * never null. Arguments that are not strings convert as tostring() would, as Kusto does.
 */
import { queryError } from '../../errors.js';
import { join, type Sql, sql, str } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import { type Bound, convert, strSql } from '../bound.js';
import { arity } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

const result = (type: Bound['type'], s: Sql, call: CallExpr, notNull = false): Bound => ({
  type,
  sql: s,
  span: call.span,
  notNull,
});

/** An argument as a never-null string (other types convert as tostring does). */
const text = (b: Bound, call: CallExpr): Sql => strSql(b.type === 'string' ? b : convert(b, 'string', call.name));

function long(b: Bound, call: CallExpr, what: string): Sql {
  if (b.type !== 'long') throw queryError(`The ${what} of '${call.name}' must be long; this is a ${b.type}.`, b.span);
  return b.sql;
}

function constString(b: Bound, call: CallExpr, what: string): string {
  if (b.value?.type !== 'string') throw queryError(`The ${what} of '${call.name}' must be a constant string.`, b.span);
  return b.value.value;
}

/** A dynamic argument (anything else converts as todynamic would). */
const dyn = (b: Bound, call: CallExpr): Sql => (b.type === 'dynamic' ? b.sql : convert(b, 'dynamic', call.name).sql);
const isArray = (v: Sql): Sql => sql`(json_type(${v}) = 'ARRAY')`;
/** A JSON list back to a dynamic array. */
const toArray = (l: Sql): Sql => sql`CAST(to_json(${l}) AS JSON)`;
/** A JSON element as text: strings without quotes, null as "", anything else as its JSON. */
const elementText = (x: Sql): Sql =>
  sql`coalesce(CASE json_type(${x}) WHEN 'VARCHAR' THEN ${x} ->> '$' WHEN 'NULL' THEN '' ELSE CAST(${x} AS VARCHAR) END, '')`;
/** The characters (code points) of a string as a list; none for "". */
const chars = (s: Sql): Sql => sql`(CASE WHEN ${s} = '' THEN []::VARCHAR[] ELSE string_split(${s}, '') END)`;
/** A list of code points as a string; null when one is not a valid code point. */
const fromCodePoints = (l: Sql): Sql =>
  sql`(CASE WHEN list_bool_or(list_transform(${l}, x -> x IS NULL OR x < 0 OR x > 1114111 OR (x BETWEEN 55296 AND 57343))) THEN NULL ELSE array_to_string(list_transform(${l}, x -> chr(CAST(x AS INTEGER))), '') END)`;
/** A dynamic array of whole numbers as a BIGINT list (null when it is not one). */
const longList = (v: Sql): Sql =>
  sql`(CASE WHEN ${isArray(v)} AND NOT list_bool_or(list_transform(CAST(${v} AS JSON[]), x -> json_type(x) NOT IN ('BIGINT', 'UBIGINT'))) THEN CAST(${v} AS BIGINT[]) END)`;

/**
 * indexof: Kusto searches a window of `length` characters (-1: to the end) from `start`, and for
 * each further occurrence searches the same-sized window again one character after the previous
 * match. The fold keeps the last match (-2 once nothing is found).
 */
function indexofSql(s: Sql, m: Sql, start: Sql, length: Sql, occurrence: Sql): Sql {
  const n = sql`length(${s})`;
  const from = sql`(CASE WHEN ${start} < 0 THEN greatest(${n} + ${start}, 0) ELSE ${start} END)`;
  const window = sql`(CASE WHEN ${length} = -1 THEN ${n} + 1 ELSE ${length} END)`;
  const step = sql`(CASE WHEN acc = -2 OR acc + 1 > ${n} THEN -2 ELSE (CASE WHEN strpos(substr(${s}, CAST(acc + 2 AS BIGINT), ${window}), ${m}) > 0 THEN acc + strpos(substr(${s}, CAST(acc + 2 AS BIGINT), ${window}), ${m}) ELSE -2 END) END)`;
  const found = sql`list_reduce(range(${occurrence}), (acc, i) -> ${step}, CAST(${from} - 1 AS BIGINT))`;
  return sql`(CASE WHEN ${occurrence} < 0 OR ${length} < -1 THEN NULL WHEN ${occurrence} = 0 THEN -1 ELSE (CASE WHEN ${found} < 0 THEN -1 ELSE ${found} END) END)`;
}

/** A regex pattern as a SQL string; DuckDB's RE2 is checked when the query runs. */
const pattern = (b: Bound, call: CallExpr, what: string): Sql => {
  if (b.type !== 'string') throw queryError(`The ${what} of '${call.name}' must be a string; this is a ${b.type}.`, b.span);
  return strSql(b);
};

/** trim/trim_start/trim_end: remove the leading and/or trailing run of matches of the regex. */
const trimFn =
  (ends: 'both' | 'start' | 'end'): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 2);
    const re = constString(args[0] as Bound, call, 'regex');
    let s = text(args[1] as Bound, call);
    if (re === '') return result('string', s, call, true);
    if (ends !== 'end') s = sql`regexp_replace(${s}, ${str(`^(?:${re})+`)}, '')`;
    if (ends !== 'start') s = sql`regexp_replace(${s}, ${str(`(?:${re})+$`)}, '')`;
    return result('string', s, call, true);
  };

/** A punycode conversion; text that does not convert gives "". */
const punycodeFn =
  (udf: Sql): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 1);
    return result('string', sql`coalesce(${udf}(${text(args[0] as Bound, call)}), '')`, call, true);
  };

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  strcat_delim: (args, call) => {
    arity(call, args.length, 3, 64);
    const [delim, ...rest] = args as [Bound, ...Bound[]];
    return result(
      'string',
      sql`concat_ws(${text(delim, call)}, ${join(
        rest.map((a) => text(a, call)),
        ', ',
      )})`,
      call,
      true,
    );
  },
  strcat_array: (args, call) => {
    arity(call, args.length, 2);
    const v = dyn(args[0] as Bound, call);
    const delim = text(args[1] as Bound, call);
    const joined = sql`array_to_string(list_transform(CAST(${v} AS JSON[]), x -> ${elementText(sql`x`)}), ${delim})`;
    return result('string', sql`coalesce(CASE WHEN ${isArray(v)} THEN ${joined} END, '')`, call, true);
  },
  strrep: (args, call) => {
    arity(call, args.length, 2, 3);
    const s = text(args[0] as Bound, call);
    // Kusto caps the multiplier at 1024; below 1 gives "".
    const times = sql`least(greatest(coalesce(${long(args[1] as Bound, call, 'multiplier')}, 0), 0), 1024)`;
    const delim = args[2] ? text(args[2], call) : sql`''`;
    return result('string', sql`array_to_string(list_transform(range(${times}), i -> ${s}), ${delim})`, call, true);
  },
  strcmp: (args, call) => {
    arity(call, args.length, 2);
    const [a, b] = [text(args[0] as Bound, call), text(args[1] as Bound, call)];
    return result('long', sql`(CASE WHEN ${a} < ${b} THEN -1 WHEN ${a} > ${b} THEN 1 ELSE 0 END)`, call, true);
  },
  reverse: (args, call) => {
    arity(call, args.length, 1);
    return result('string', sql`reverse(${text(args[0] as Bound, call)})`, call, true);
  },
  indexof: (args, call) => {
    arity(call, args.length, 2, 5);
    const s = text(args[0] as Bound, call);
    const m = text(args[1] as Bound, call);
    const start = args[2] ? long(args[2], call, 'start') : sql`0`;
    const length = args[3] ? long(args[3], call, 'length') : sql`-1`;
    const occurrence = args[4] ? long(args[4], call, 'occurrence') : sql`1`;
    return result('long', indexofSql(s, m, start, length, occurrence), call);
  },
  countof: (args, call) => {
    arity(call, args.length, 2, 3);
    const s = text(args[0] as Bound, call);
    const kind = args[2] ? constString(args[2], call, 'kind') : 'normal';
    if (kind === 'regex') {
      const re = pattern(args[1] as Bound, call, 'regex');
      return result('long', sql`CAST(len(regexp_extract_all(${s}, ${re})) AS BIGINT)`, call, true);
    }
    if (kind !== 'normal') throw queryError(`The kind of 'countof' must be "normal" or "regex", not "${kind}".`, call.span);
    const m = text(args[1] as Bound, call);
    // Plain matches may overlap (Kusto): count every position where the search text starts.
    const hits = sql`len(list_filter(range(1, length(${s}) - length(${m}) + 2), i -> substr(${s}, i, length(${m})) = ${m}))`;
    return result('long', sql`(CASE WHEN ${m} = '' THEN 0 ELSE CAST(${hits} AS BIGINT) END)`, call, true);
  },
  replace_string: (args, call) => {
    arity(call, args.length, 3);
    const [s, l, r] = (args as Bound[]).map((a) => text(a, call)) as [Sql, Sql, Sql];
    return result('string', sql`(CASE WHEN ${l} = '' THEN ${s} ELSE replace(${s}, ${l}, ${r}) END)`, call, true);
  },
  replace_regex: (args, call) => {
    arity(call, args.length, 3);
    const s = text(args[0] as Bound, call);
    const re = pattern(args[1] as Bound, call, 'regex');
    const rewrite = text(args[2] as Bound, call);
    return result('string', sql`regexp_replace(${s}, ${re}, ${rewrite}, 'g')`, call, true);
  },
  translate: (args, call) => {
    arity(call, args.length, 3);
    const search = [...constString(args[0] as Bound, call, 'search list')];
    const replacement = [...constString(args[1] as Bound, call, 'replacement list')];
    const s = text(args[2] as Bound, call);
    // A shorter replacement list repeats its last character; an empty one deletes (Kusto).
    const last = replacement[replacement.length - 1];
    const to = last === undefined ? [] : search.map((_, i) => replacement[i] ?? last);
    return result('string', sql`translate(${s}, ${str(search.join(''))}, ${str(to.join(''))})`, call, true);
  },
  trim: trimFn('both'),
  trim_start: trimFn('start'),
  trim_end: trimFn('end'),
  split: (args, call) => {
    arity(call, args.length, 2, 3);
    const s = text(args[0] as Bound, call);
    const d = text(args[1] as Bound, call);
    // An empty delimiter does not split (.NET's String.Split).
    const parts = sql`(CASE WHEN ${d} = '' THEN [${s}] ELSE string_split(${s}, ${d}) END)`;
    if (!args[2]) return result('dynamic', toArray(parts), call, true);
    const i = long(args[2], call, 'index');
    // With an index: an array of that one part, or an empty array out of range.
    return result(
      'dynamic',
      toArray(sql`(CASE WHEN ${i} >= 0 AND ${i} < len(${parts}) THEN [${parts}[${i} + 1]] ELSE []::VARCHAR[] END)`),
      call,
    );
  },
  string_size: (args, call) => {
    arity(call, args.length, 1);
    return result('long', sql`CAST(octet_length(encode(${text(args[0] as Bound, call)})) AS BIGINT)`, call, true);
  },
  isascii: (args, call) => {
    arity(call, args.length, 1);
    const s = text(args[0] as Bound, call);
    return result('bool', sql`(octet_length(encode(${s})) = length(${s}))`, call, true);
  },
  to_utf8: (args, call) => {
    arity(call, args.length, 1);
    const hex = sql`hex(encode(${text(args[0] as Bound, call)}))`;
    const bytes = sql`list_transform(range(0, length(${hex}), 2), i -> CAST(('0x' || substr(${hex}, i + 1, 2)) AS BIGINT))`;
    return result('dynamic', toArray(bytes), call, true);
  },
  unicode_codepoints_from_string: (args, call) => {
    arity(call, args.length, 1);
    const s = text(args[0] as Bound, call);
    return result('dynamic', toArray(sql`list_transform(${chars(s)}, c -> CAST(unicode(c) AS BIGINT))`), call, true);
  },
  unicode_codepoints_to_string: (args, call) => {
    arity(call, args.length, 1);
    return result('string', sql`coalesce(${fromCodePoints(longList(dyn(args[0] as Bound, call)))}, '')`, call, true);
  },
  make_string: (args, call) => {
    arity(call, args.length, 1, 64);
    const lists = args.map((a) => {
      if (a.type === 'long') return sql`[${a.sql}]`;
      if (a.type === 'dynamic') return longList(a.sql);
      throw queryError(`The arguments of 'make_string' must be long or dynamic arrays of long; this is a ${a.type}.`, a.span);
    });
    const all = lists.reduce((acc, l) => sql`list_concat(${acc}, ${l})`);
    return result('string', sql`coalesce(${fromCodePoints(all)}, '')`, call, true);
  },
  base64_encode_tostring: (args, call) => {
    arity(call, args.length, 1);
    return result('string', sql`to_base64(encode(${text(args[0] as Bound, call)}))`, call, true);
  },
  base64_decode_tostring: (args, call) => {
    arity(call, args.length, 1);
    // Text that is not base64, or bytes that are not UTF-8, give "".
    return result('string', sql`coalesce(try(decode(from_base64(${text(args[0] as Bound, call)}))), '')`, call, true);
  },
  url_encode_component: (args, call) => {
    arity(call, args.length, 1);
    // Every byte but A-Z a-z 0-9 - _ . ~ as %XX (upper-case hex), as .NET's Uri.EscapeDataString.
    return result('string', sql`url_encode(${text(args[0] as Bound, call)})`, call, true);
  },
  url_decode: (args, call) => {
    arity(call, args.length, 1);
    // '+' is a space in a URL query (Kusto decodes it so); %2B stays a '+'.
    return result('string', sql`coalesce(try(url_decode(replace(${text(args[0] as Bound, call)}, '+', ' '))), '')`, call, true);
  },
  // JS functions (common/src/query/kusto-udfs.ts), registered on every worker and on the merge database.
  punycode_from_string: punycodeFn(sql`kql_punycode_encode`),
  punycode_to_string: punycodeFn(sql`kql_punycode_decode`),
  punycode_domain_from_string: punycodeFn(sql`kql_punycode_domain_encode`),
  punycode_domain_to_string: punycodeFn(sql`kql_punycode_domain_decode`),
  new_guid: (args, call) => {
    arity(call, args.length, 0);
    return result('guid', sql`gen_random_uuid()`, call, true);
  },
};

const NONE: NamingRule = { kind: 'none' };

function fn(name: string, signatures: string[], returns: string, naming: NamingRule = NONE): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[name];
  if (!bind) throw new Error(`no implementation for the string function ${name}`);
  return { kind: 'scalar', name, signatures, returns, naming, bind };
}

export const STRING_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn('strcat_delim', ['strcat_delim(delimiter: string, value: any, value: any, ...): string'], 'string (2 to 63 values)'),
  fn('strcat_array', ['strcat_array(array: dynamic, delimiter: string): string'], 'string; "" for a non-array'),
  fn(
    'strrep',
    ['strrep(value: any, multiplier: long[, delimiter: string]): string'],
    'string (the multiplier is capped at 1024)',
  ),
  fn('strcmp', ['strcmp(string1: string, string2: string): long'], 'long: -1, 0 or 1 (ordinal)'),
  fn('reverse', ['reverse(value: any): string'], 'string'),
  fn(
    'indexof',
    ['indexof(source: any, lookup: any[, start: long[, length: long[, occurrence: long]]]): long'],
    'long: the 0-based index, -1 when not found; null when occurrence < 0 or length < -1',
  ),
  fn('countof', ['countof(source: string, search: string[, kind: "normal"|"regex"]): long'], 'long (plain matches may overlap)'),
  fn('replace_string', ['replace_string(text: string, lookup: string, rewrite: string): string'], 'string'),
  fn('replace_regex', ['replace_regex(source: string, regex: string, rewrite: string): string'], 'string (\\1 … \\9 in rewrite)'),
  fn('translate', ['translate(searchList: string, replacementList: string, source: string): string'], 'string'),
  fn('trim', ['trim(regex: string, source: string): string'], 'string without leading and trailing matches'),
  fn('trim_start', ['trim_start(regex: string, source: string): string'], 'string without leading matches'),
  fn('trim_end', ['trim_end(regex: string, source: string): string'], 'string without trailing matches'),
  fn('split', ['split(source: string, delimiter: string[, index: long]): dynamic'], 'dynamic array of strings', {
    kind: 'first-argument',
  }),
  fn('string_size', ['string_size(source: string): long'], 'long: the size in UTF-8 bytes', {
    kind: 'prefix',
    prefix: 'string_size',
  }),
  fn('isascii', ['isascii(value: string): bool'], 'bool'),
  fn('to_utf8', ['to_utf8(source: string): dynamic'], 'dynamic array of the UTF-8 bytes'),
  fn(
    'unicode_codepoints_from_string',
    ['unicode_codepoints_from_string(value: string): dynamic'],
    'dynamic array of code points',
  ),
  fn(
    'unicode_codepoints_to_string',
    ['unicode_codepoints_to_string(values: dynamic): string'],
    'string; "" when an element is not a valid code point',
  ),
  fn('make_string', ['make_string(value: long|dynamic, ...): string'], 'string of the code points; "" when one is invalid'),
  fn('base64_encode_tostring', ['base64_encode_tostring(value: string): string'], 'string: base64 of the UTF-8 bytes'),
  fn('base64_decode_tostring', ['base64_decode_tostring(value: string): string'], 'string; "" when not base64 of UTF-8 text'),
  fn('url_encode_component', ['url_encode_component(url: string): string'], 'string'),
  fn('url_decode', ['url_decode(encoded_url: string): string'], 'string (+ decodes as a space)'),
  fn('punycode_from_string', ['punycode_from_string(input: string): string'], 'string: the RFC 3492 encoding of one label'),
  fn('punycode_to_string', ['punycode_to_string(encoded: string): string'], 'string; "" when it does not decode'),
  fn('punycode_domain_from_string', ['punycode_domain_from_string(domain: string): string'], 'string: non-ASCII labels as xn--…'),
  fn('punycode_domain_to_string', ['punycode_domain_to_string(domain: string): string'], 'string; "" when it does not decode'),
  fn('new_guid', ['new_guid(): guid'], 'guid: a new random (version 4) GUID per row'),
];
