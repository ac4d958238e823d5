/**
 * Kusto's term operators beyond `has` (issue 17, family 1): `has_any` / `has_all` over a list of
 * terms, and `hasprefix` / `hassuffix` (a term that starts or ends with the text). Terms are runs
 * of letters and digits, as for `has` (termRegex in expr-binder.ts).
 */
import { queryError, type Span } from '../errors.js';
import { type Sql, sql, str } from '../sql/sql.js';
import { type Bound, convert, strSql } from './bound.js';
import { escapeRegex, termRegex } from './expr-binder.js';
import { foldPrefilter, prefiltered, prefilterSql, regexLiteralPrefilter } from './string-prefilter.js';
import { termCheckSql } from './term-check.js';
import { foldSubject } from './term-fold-subject.js';

const TERM_CHAR = /[\p{L}\p{N}]/u;
const BEFORE = '(?:^|[^\\p{L}\\p{N}])';
const AFTER = '(?:[^\\p{L}\\p{N}]|$)';

/** hasprefix: a term starts with the text (a boundary before it only); hassuffix: a term ends with it. */
export function affixRegex(needle: string, kind: 'prefix' | 'suffix', caseSensitive: boolean): string {
  const chars = [...needle];
  const first = chars[0];
  const last = chars[chars.length - 1];
  const before = kind === 'prefix' && first !== undefined && TERM_CHAR.test(first) ? BEFORE : '';
  const after = kind === 'suffix' && last !== undefined && TERM_CHAR.test(last) ? AFTER : '';
  return `${caseSensitive ? '' : '(?i)'}${before}${escapeRegex(needle)}${after}`;
}

/**
 * The constant terms of a has_any/has_all list: strings, and the elements of dynamic arrays
 * (numbers and bools as their text). A term read from a column is refused, as for `has` (a regex
 * per row).
 */
export function terms(items: Bound[], op: string): string[] {
  const out: string[] = [];
  for (const b of items) {
    const v = b.value;
    if (v?.type === 'string') out.push(v.value);
    else if (v?.type === 'dynamic' && v.value !== null) {
      const parsed: unknown = JSON.parse(v.value);
      for (const e of Array.isArray(parsed) ? parsed : [parsed]) {
        if (typeof e === 'string') out.push(e);
        else if (typeof e === 'number' || typeof e === 'boolean') out.push(String(e));
        else throw queryError(`The terms of '${op}' must be strings; this array holds ${JSON.stringify(e)}.`, b.span);
      }
    } else if (v?.type === 'long' || v?.type === 'real') {
      if (v.value !== null) out.push(String(v.value));
    } else {
      throw queryError(
        `'${op}' needs constant terms (strings or a dynamic array); a column or an expression over columns is not supported.`,
        b.span,
      );
    }
  }
  return out;
}

/** has_any with more terms gets no prefilter: an OR of that many substring tests costs more than it saves. */
const ANY_PREFILTER_TERMS = 8;

/** Terms per has_any regex: RE2 refuses programs past its size limit ("pattern too large"). */
const TERMS_PER_REGEX = 500;

/**
 * Case-insensitive regexes that together match any of the terms: the terms grouped by whether
 * they start and end with a letter or digit (which decides the boundaries around them, as in
 * termRegex), each group one alternation with its boundaries written once, in chunks.
 */
export function anyTermRegexes(terms: string[]): string[] {
  const groups = new Map<string, string[]>();
  for (const t of terms) {
    const chars = [...t];
    const key = `${TERM_CHAR.test(chars[0] as string) ? 'B' : ''}|${TERM_CHAR.test(chars[chars.length - 1] as string) ? 'A' : ''}`;
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  const out: string[] = [];
  for (const [key, group] of groups) {
    const [before, after] = key.split('|');
    for (let i = 0; i < group.length; i += TERMS_PER_REGEX) {
      const alternatives = group
        .slice(i, i + TERMS_PER_REGEX)
        .map(escapeRegex)
        .join('|');
      out.push(`(?i)${before ? BEFORE : ''}(?:${alternatives})${after ? AFTER : ''}`);
    }
  }
  return out;
}

/** `left has_any (t1, t2, …)` / `has_all`: case-insensitive term matches, one regex per query. */
export function hasAnyAll(
  op: 'has_any' | 'has_all',
  left: Bound,
  items: Bound[],
  span: Span,
  termFolds?: ReadonlySet<string>,
): Bound {
  const converted = convert(left, 'string', op);
  const text = strSql(converted);
  const ts = terms(items, op);
  if (ts.length > 10_000) throw queryError(`'${op}' takes at most 10,000 terms, not ${ts.length}.`, span);
  const nonEmpty = ts.filter((t) => t !== '');
  // On the column's term fold where it may be read and every term is ASCII (decision 0045): the
  // regexes and checks answer the same there, the prefilters are byte searches.
  const fold = foldSubject(left, text === converted.sql, nonEmpty, termFolds);
  const subject = fold ?? text;
  const prefilterOf = (t: string) => (fold ? foldPrefilter(t) : regexLiteralPrefilter(t, false));
  let s: Sql;
  if (op === 'has_any') {
    // "" is in every text, as for `has`; no terms match nothing.
    if (nonEmpty.length < ts.length) s = sql`true`;
    else if (nonEmpty.length === 0) s = sql`false`;
    else {
      const distinct = [...new Set(nonEmpty)];
      const regexes = anyTermRegexes(distinct);
      s = regexes.map((re) => sql`regexp_matches(${subject}, ${str(re)})`).reduce((acc, p) => sql`(${acc} OR ${p})`);
      // A text holding any term passes one term's prefilter: their OR is a superset of the match
      // (decision 0033), only worth it for a few terms, and only when every term has one.
      const pres = distinct.length <= ANY_PREFILTER_TERMS ? distinct.map((t) => prefilterSql(subject, prefilterOf(t))) : [];
      if (pres.length > 0 && pres.every((p) => p !== undefined))
        s = sql`(${pres.map((p) => sql`(${p})`).reduce((acc, p) => sql`${acc} OR ${p}`)}) AND ${s}`;
      s = sql`(${s})`;
    }
  } else {
    // Terms with a prefilter first: DuckDB evaluates the conjuncts in order on the rows still
    // passing, so a term without one (has_all ("ok", …)) runs its regex only on those rows.
    const distinct = [...new Set(nonEmpty)];
    const withPrefilter = distinct.filter((t) => prefilterSql(subject, prefilterOf(t)) !== undefined);
    const parts = [...withPrefilter, ...distinct.filter((t) => !withPrefilter.includes(t))].map((t) =>
      prefiltered(subject, prefilterOf(t), termCheckSql(subject, t, false, 'term', termRegex(t, false))),
    );
    s = parts.length === 0 ? sql`true` : parts.reduce((acc, p) => sql`(${acc} AND ${p})`);
  }
  return { type: 'bool', sql: s, span, notNull: true };
}
