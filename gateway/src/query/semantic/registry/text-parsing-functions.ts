/**
 * String functions that take text apart or format it (issue 16 item 5, issue 17 family 1):
 * extract_all, extract_json, parse_url, parse_urlquery, parse_path, parse_csv, format_bytes,
 * url_encode, isutf8 and the base64 array and GUID forms. Regexes run in DuckDB (RE2, as
 * `extract` does); the rest are JS functions over text (common/src/query/text-values.ts), the
 * same code on every worker and in the gateway's merge.
 */
import { queryError } from '../../errors.js';
import { int, join, type Sql, sql, str } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import type { KqlType } from '../../types.js';
import { type Bound, coerce, convert, strSql } from '../bound.js';
import { arity } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

const result = (type: KqlType, s: Sql, call: CallExpr, notNull = false): Bound => ({ type, sql: s, span: call.span, notNull });
const text = (b: Bound, call: CallExpr): Sql => strSql(convert(b, 'string', call.name));
const json = (s: Sql): Sql => sql`CAST(${s} AS JSON)`;

function constString(b: Bound, call: CallExpr, what: string): string {
  if (b.value?.type !== 'string') throw queryError(`The ${what} of '${call.name}' must be a constant string.`, b.span);
  return b.value.value;
}

/**
 * The capture groups of a regex, in order, with their names ((?P<name>…) or (?<name>…)):
 * every unescaped `(` outside a character class that is not `(?…)` other than a named group.
 */
export function captureGroups(regex: string): (string | undefined)[] {
  const groups: (string | undefined)[] = [];
  let inClass = false;
  for (let i = 0; i < regex.length; i++) {
    const c = regex[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') {
      if (regex[i + 1] !== '?') groups.push(undefined);
      else {
        const named = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(regex.slice(i));
        if (named) groups.push(named[1]);
      }
    }
  }
  return groups;
}

/** extract_all(regex, [groups,] source): every match's groups (1 group: an array of strings; several: arrays); null without a match. */
const extractAll: ScalarFn = (args, call) => {
  arity(call, args.length, 2, 3);
  const re = constString(args[0] as Bound, call, 'regex');
  const groups = captureGroups(re);
  if (groups.length < 1 || groups.length > 16)
    throw queryError(
      `The regex of '${call.name}' must have 1 to 16 capture groups; it has ${groups.length}.`,
      (args[0] as Bound).span,
    );
  let selected = groups.map((_, i) => i + 1);
  if (args.length === 3) {
    const sel = args[1] as Bound;
    if (sel.value?.type !== 'dynamic' || sel.value.value === null)
      throw queryError(`The capture groups of '${call.name}' must be a constant dynamic array.`, sel.span);
    const parsed: unknown = JSON.parse(sel.value.value);
    if (!Array.isArray(parsed) || parsed.length === 0)
      throw queryError(`The capture groups of '${call.name}' must be a non-empty array.`, sel.span);
    selected = parsed.map((g) => {
      const index = typeof g === 'string' ? groups.indexOf(g) + 1 : typeof g === 'number' && Number.isInteger(g) ? g : 0;
      if (index < 1 || index > groups.length)
        throw queryError(`'${call.name}' has no capture group ${JSON.stringify(g)} in its regex.`, sel.span);
      return index;
    });
  }
  const source = text(args[args.length - 1] as Bound, call);
  const pattern = str(re);
  const of = (g: number) => sql`regexp_extract_all(${source}, ${pattern}, CAST(${int(g)} AS INTEGER))`;
  const matches = sql`len(regexp_extract_all(${source}, ${pattern}))`;
  const value =
    selected.length === 1
      ? of(selected[0] as number)
      : sql`list_transform(range(1, ${matches} + 1), i -> [${join(
          selected.map((g) => sql`${of(g)}[i]`),
          ', ',
        )}])`;
  return result('dynamic', sql`(CASE WHEN ${matches} > 0 THEN ${json(sql`to_json(${value})`)} END)`, call);
};

/** The `typeof(T)` argument some functions take last; undefined when absent. */
function typeArg(b: Bound | undefined, call: CallExpr): KqlType | undefined {
  if (b === undefined) return undefined;
  if (b.typeLiteral === undefined) throw queryError(`The last argument of '${call.name}' must be typeof(T).`, b.span);
  return b.typeLiteral;
}

/** A string result converted to the type asked for (Kusto: null when it does not convert). */
function typed(s: Sql, type: KqlType | undefined, call: CallExpr): Bound {
  const asString = result('string', s, call, true);
  if (type === undefined || type === 'string') return asString;
  return convert(asString, type, call.name);
}

/** JSONPath `$.a.b[0]` or `$['a'][0]` as the path DuckDB reads (`$."a"`); undefined for other forms. */
export function jsonPath(path: string): string | undefined {
  if (!path.startsWith('$')) return undefined;
  let out = '$';
  let rest = path.slice(1);
  // One segment at a time: .name, [n], ['key'] or ["key"].
  const SEGMENTS: [RegExp, (m: RegExpExecArray) => string | undefined][] = [
    [/^\.([A-Za-z_][A-Za-z0-9_]*)/, (m) => `."${m[1]}"`],
    [/^\[(\d+)\]/, (m) => `[${m[1]}]`],
    [/^\['((?:[^'\\]|\\.)*)'\]/, (m) => quotedKey(m[1] as string)],
    [/^\["((?:[^"\\]|\\.)*)"\]/, (m) => quotedKey(m[1] as string)],
  ];
  while (rest !== '') {
    let matched: RegExpExecArray | undefined;
    let piece: string | undefined;
    for (const [re, render] of SEGMENTS) {
      const m = re.exec(rest);
      if (m) {
        matched = m;
        piece = render(m);
        break;
      }
    }
    if (!matched || piece === undefined) return undefined;
    out += piece;
    rest = rest.slice(matched[0].length);
  }
  return out;
}

/** A bracketed key as DuckDB's quoted path segment; a key with a double quote is not supported. */
function quotedKey(escaped: string): string | undefined {
  const key = escaped.replace(/\\(.)/g, '$1');
  return key.includes('"') ? undefined : `."${key}"`;
}

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  extract_all: extractAll,
  extract_json: (args, call) => {
    arity(call, args.length, 2, 3);
    const raw = constString(args[0] as Bound, call, 'JSONPath');
    const path = jsonPath(raw);
    if (path === undefined)
      throw queryError(
        `The JSONPath '${raw}' of '${call.name}' is not supported: use $.a.b, $['a'] and [n].`,
        (args[0] as Bound).span,
      );
    const source = text(args[1] as Bound, call);
    // A string value reads as itself, anything else as its JSON text; no value or bad JSON gives "".
    const value = sql`coalesce(CASE WHEN json_valid(${source}) THEN json_extract_string(${source}, ${str(path)}) END, '')`;
    return typed(value, typeArg(args[2], call), call);
  },
  parse_url: (args, call) => {
    arity(call, args.length, 1);
    return result('dynamic', json(sql`kql_parse_url(${text(args[0] as Bound, call)})`), call);
  },
  parse_urlquery: (args, call) => {
    arity(call, args.length, 1);
    return result('dynamic', json(sql`kql_parse_urlquery(${text(args[0] as Bound, call)})`), call);
  },
  parse_path: (args, call) => {
    arity(call, args.length, 1);
    return result('dynamic', json(sql`kql_parse_path(${text(args[0] as Bound, call)})`), call);
  },
  parse_csv: (args, call) => {
    arity(call, args.length, 1);
    return result('dynamic', json(sql`kql_parse_csv(${text(args[0] as Bound, call)})`), call);
  },
  format_bytes: (args, call) => {
    arity(call, args.length, 1, 3);
    const size = args[0] as Bound;
    if (size.type !== 'long' && size.type !== 'real')
      throw queryError(`The size of '${call.name}' must be a number; this is a ${size.type}.`, size.span);
    const precision = args[1];
    if (precision && precision.type !== 'long')
      throw queryError(`The precision of '${call.name}' must be a long; this is a ${precision.type}.`, precision.span);
    const units = args[2] ? constString(args[2], call, 'units') : '';
    if (!['', 'bytes', 'kb', 'mb', 'gb', 'tb', 'pb', 'eb'].includes(units.toLowerCase()))
      throw queryError(`The units of '${call.name}' must be Bytes, KB, MB, GB, TB, PB or EB.`, (args[2] as Bound).span);
    const s = sql`kql_format_bytes(${coerce(size, 'real')}, ${precision ? precision.sql : sql`0`}, ${str(units)})`;
    return result('string', sql`coalesce(${s}, '')`, call, true);
  },
  url_encode: (args, call) => {
    arity(call, args.length, 1);
    return result('string', sql`kql_url_encode(${text(args[0] as Bound, call)})`, call, true);
  },
  isutf8: (args, call) => {
    arity(call, args.length, 1);
    // Strings here are always valid UTF-8 (DuckDB refuses anything else on the way in).
    const s = args[0] as Bound;
    if (s.type !== 'string') throw queryError(`The argument of '${call.name}' must be a string; this is a ${s.type}.`, s.span);
    return result('bool', sql`(${text(s, call)} IS NOT NULL)`, call, true);
  },
  base64_encode_fromarray: (args, call) => {
    arity(call, args.length, 1);
    const a = args[0] as Bound;
    if (a.type !== 'dynamic')
      throw queryError(`The argument of '${call.name}' must be a dynamic array; this is a ${a.type}.`, a.span);
    return result('string', sql`coalesce(kql_base64_from_array(CAST(${a.sql} AS VARCHAR)), '')`, call, true);
  },
  base64_decode_toarray: (args, call) => {
    arity(call, args.length, 1);
    return result('dynamic', json(sql`kql_base64_to_array(${text(args[0] as Bound, call)})`), call);
  },
  base64_encode_fromguid: (args, call) => {
    arity(call, args.length, 1);
    const g = args[0] as Bound;
    if (g.type !== 'guid') throw queryError(`The argument of '${call.name}' must be a guid; this is a ${g.type}.`, g.span);
    return result('string', sql`coalesce(kql_base64_from_guid(CAST(${g.sql} AS VARCHAR)), '')`, call, true);
  },
  base64_decode_toguid: (args, call) => {
    arity(call, args.length, 1);
    return result('guid', sql`TRY_CAST(kql_base64_to_guid(${text(args[0] as Bound, call)}) AS UUID)`, call);
  },
};

function fn(name: string, signatures: string[], returns: string, naming: NamingRule = { kind: 'none' }): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[name];
  if (!bind) throw new Error(`no implementation for the text function ${name}`);
  return { kind: 'scalar', name, signatures, returns, naming, bind };
}

/** A deprecated spelling Kusto still accepts (`extractjson` for `extract_json`). */
function alias(name: string, of: string): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[of];
  if (!bind) throw new Error(`no implementation for the text function ${of}`);
  return {
    kind: 'scalar',
    name,
    signatures: [`${name}(…)`],
    returns: `as ${of}`,
    naming: { kind: 'none' },
    bind,
    origin: 'alias',
  };
}

export const TEXT_PARSING_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn(
    'extract_all',
    ['extract_all(regex: string, [captureGroups: dynamic,] source: string): dynamic'],
    'dynamic array of every match (of arrays when several groups are taken); null when nothing matches',
  ),
  fn(
    'extract_json',
    ['extract_json(jsonPath: string, source: string[, typeof(T)])'],
    'string (the value at the path; "" when absent), or T with typeof(T) (null when it does not convert)',
  ),
  fn(
    'parse_url',
    ['parse_url(url: string): dynamic'],
    'dynamic bag: Scheme, Host, Port, Path, Username, Password, Query Parameters, Fragment; {} for a non-absolute URL',
  ),
  fn('parse_urlquery', ['parse_urlquery(query: string): dynamic'], 'dynamic bag {"Query Parameters": {…}} (values decoded)'),
  fn(
    'parse_path',
    ['parse_path(path: string): dynamic'],
    'dynamic bag: Scheme, RootPath, DirectoryPath, DirectoryName, Filename, Extension, AlternateDataStreamName',
  ),
  fn('parse_csv', ['parse_csv(csv_text: string): dynamic'], 'dynamic array of the first record’s fields', {
    kind: 'first-argument',
  }),
  fn(
    'format_bytes',
    ['format_bytes(size: real[, precision: long[, units: string]]): string'],
    'string such as "10.1 KB" (base 1024; units chosen when not given)',
    { kind: 'first-argument' },
  ),
  fn('url_encode', ['url_encode(url: string): string'], 'string: form encoding (a space as +, %xx in lower case)'),
  fn('isutf8', ['isutf8(value: string): bool'], 'bool (always true: strings are stored as UTF-8)'),
  fn(
    'base64_encode_fromarray',
    ['base64_encode_fromarray(bytes: dynamic): string'],
    'string: base64 of the bytes; "" when an element is not a byte',
  ),
  fn(
    'base64_decode_toarray',
    ['base64_decode_toarray(value: string): dynamic'],
    'dynamic array of the bytes; null for bad base64',
  ),
  fn(
    'base64_encode_fromguid',
    ['base64_encode_fromguid(value: guid): string'],
    'string: base64 of the GUID’s bytes in .NET order',
  ),
  fn('base64_decode_toguid', ['base64_decode_toguid(value: string): guid'], 'guid; null unless the text is base64 of 16 bytes'),
  alias('extractall', 'extract_all'),
  alias('extractjson', 'extract_json'),
  alias('parseurl', 'parse_url'),
  alias('parseurlquery', 'parse_urlquery'),
];
