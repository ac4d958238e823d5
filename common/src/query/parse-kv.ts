/**
 * The delimiter modes of Kusto's `parse-kv` operator (issue 16, item 5): the values of the listed
 * keys in a text of key/value pairs. Runs as a JS scalar function (kusto-udfs.ts) on every worker
 * and in the gateway's merge; the regex mode runs in DuckDB (RE2) instead.
 */

export interface ParseKvOptions {
  /** Both set: the specified-delimiter mode; neither: any non-alphanumeric character delimits. */
  pairDelimiter?: string;
  kvDelimiter?: string;
  /** Opening and closing quote characters ("\"" or "()"); a key or value may be quoted. */
  quotes: string[];
  /** Characters that escape the next one inside a quoted value. */
  escapes: string[];
  /** An unquoted value runs up to the next key rather than the next pair delimiter. */
  greedy: boolean;
}

const ALNUM = /[\p{L}\p{N}]/u;

/** Reads a quoted run starting at `i` (an opening quote); returns its text and the index after it. */
function readQuoted(text: string, i: number, close: string, escapes: string[]): [string, number] {
  let out = '';
  let j = i + 1;
  while (j < text.length) {
    const c = text[j] as string;
    if (escapes.includes(c) && j + 1 < text.length) {
      out += text[j + 1];
      j += 2;
      continue;
    }
    if (c === close) return [out, j + 1];
    out += c;
    j++;
  }
  return [out, j];
}

function closingQuote(c: string | undefined, quotes: string[]): string | undefined {
  if (c === undefined) return undefined;
  const q = quotes.find((q) => q[0] === c);
  return q === undefined ? undefined : (q[1] ?? q[0]);
}

/** Specified delimiters: pairs split by the pair delimiter, keys from values by the key/value delimiter. */
function specified(text: string, o: ParseKvOptions, wanted: Set<string>): Record<string, string> {
  const pd = o.pairDelimiter as string;
  const kvd = o.kvDelimiter as string;
  const out: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i] as string) && !text.startsWith(pd, i)) i++;
    if (text.startsWith(pd, i)) {
      i += pd.length;
      continue;
    }
    // The key: quoted, or up to the key/value delimiter (a pair delimiter first means no value).
    let key: string;
    const close = closingQuote(text[i], o.quotes);
    if (close !== undefined) [key, i] = readQuoted(text, i, close, o.escapes);
    else {
      const kvAt = text.indexOf(kvd, i);
      const pdAt = text.indexOf(pd, i);
      if (kvAt < 0) break;
      if (pdAt >= 0 && pdAt < kvAt) {
        i = pdAt + pd.length;
        continue;
      }
      key = text.slice(i, kvAt);
      i = kvAt;
    }
    key = key.trim();
    while (i < text.length && /\s/.test(text[i] as string) && !text.startsWith(kvd, i)) i++;
    if (!text.startsWith(kvd, i)) continue;
    i += kvd.length;
    while (i < text.length && /\s/.test(text[i] as string) && !text.startsWith(pd, i)) i++;
    let value: string;
    const vclose = closingQuote(text[i], o.quotes);
    if (vclose !== undefined) {
      [value, i] = readQuoted(text, i, vclose, o.escapes);
      const next = text.indexOf(pd, i);
      i = next < 0 ? text.length : next + pd.length;
    } else {
      let end = text.indexOf(pd, i);
      if (o.greedy) {
        // Up to the pair delimiter before the next key, or the end of the text.
        const nextKv = text.indexOf(kvd, i);
        end = nextKv < 0 ? -1 : text.lastIndexOf(pd, nextKv);
        if (end < i) end = nextKv < 0 ? -1 : text.indexOf(pd, i);
      }
      value = end < 0 ? text.slice(i) : text.slice(i, end);
      i = end < 0 ? text.length : end + pd.length;
      value = value.trim();
    }
    if (wanted.has(key) && !(key in out)) out[key] = value;
  }
  return out;
}

/** No delimiters given: a listed key as a whole term, then non-alphanumeric characters, then the value (a term, or quoted). */
function unspecified(text: string, o: ParseKvOptions, wanted: Set<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of wanted) {
    let from = 0;
    while (from <= text.length) {
      const at = text.indexOf(key, from);
      if (at < 0) break;
      from = at + 1;
      const before = text[at - 1];
      const after = text[at + key.length];
      if ((before !== undefined && ALNUM.test(before)) || after === undefined || ALNUM.test(after)) continue;
      let i = at + key.length;
      while (i < text.length && !ALNUM.test(text[i] as string) && closingQuote(text[i], o.quotes) === undefined) i++;
      const close = closingQuote(text[i], o.quotes);
      if (close !== undefined) out[key] = readQuoted(text, i, close, o.escapes)[0].trim();
      else {
        let j = i;
        while (j < text.length && ALNUM.test(text[j] as string)) j++;
        out[key] = text.slice(i, j);
      }
      break;
    }
  }
  return out;
}

/** The first value of each wanted key found in the text (keys not found are absent). */
export function parseKv(text: string, options: ParseKvOptions, keys: string[]): Record<string, string> {
  const wanted = new Set(keys);
  if (options.pairDelimiter !== undefined && options.kvDelimiter !== undefined) return specified(text, options, wanted);
  return unspecified(text, options, wanted);
}
