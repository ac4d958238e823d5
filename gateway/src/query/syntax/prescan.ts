/**
 * A light lexical pass over the raw query text that runs before Microsoft's parser. It measures
 * bracket nesting (the parser slows down sharply with depth: 1,000 parentheses take 0.5 s), finds
 * a trailing `| render …` clause (read by the engine itself because the product's render options
 * — `fill`, `yUnit`, `spanGaps` … — are not standard KQL), and finds `datatable(…)[…]` value
 * lists (the product allows names, `null` and expressions there; Kusto's grammar only literals).
 * It knows KQL's string forms ('…', "…", @'…', h'…', ```…```, ~~~…~~~) and `//` comments.
 */
import type { Span } from '../errors.js';

interface Token {
  kind: 'word' | 'punct' | 'string' | 'other';
  text: string;
  start: number;
  end: number;
}

/** Tokens outside comments; each string literal is one token. */
function* tokens(text: string): Generator<Token> {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? n : eol + 1;
      continue;
    }
    const start = i;
    if ((c === '`' || c === '~') && text.startsWith(c.repeat(3), i)) {
      const close = text.indexOf(c.repeat(3), i + 3);
      i = close < 0 ? n : close + 3;
      yield { kind: 'string', text: '', start, end: i };
      continue;
    }
    let q = c;
    let verbatim = false;
    if ((c === '@' || c === 'h' || c === 'H') && (text[i + 1] === '"' || text[i + 1] === "'")) {
      const prev = i > 0 ? (text[i - 1] as string) : ' ';
      if (c === '@' || !/[\w$]/.test(prev)) {
        verbatim = c === '@';
        q = text[i + 1] as string;
        i++;
      }
    }
    if (q === '"' || q === "'") {
      i++;
      while (i < n) {
        const d = text[i] as string;
        if (!verbatim && d === '\\') {
          i += 2;
          continue;
        }
        if (d === q) {
          if (verbatim && text[i + 1] === q) {
            i += 2;
            continue;
          }
          break;
        }
        if (d === '\n' && !verbatim) break;
        i++;
      }
      i = Math.min(n, i + 1);
      yield { kind: 'string', text: '', start, end: i };
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      while (i < n && /[\w$-]/.test(text[i] as string)) i++;
      yield { kind: 'word', text: text.slice(start, i), start, end: i };
      continue;
    }
    i++;
    yield { kind: '()[]{}|;,'.includes(c) ? 'punct' : 'other', text: c, start, end: i };
  }
}

export interface PrescanResult {
  maxDepth: number;
  /** Where the deepest bracket opened (for the error position). */
  deepestAt: number;
  /** Offset of the `|` that starts a trailing render clause, when there is one. */
  renderPipeAt?: number;
  /** Inner ranges (between `[` and `]`) of datatable value lists. */
  datatableValues: Span[];
}

export function prescan(text: string): PrescanResult {
  let depth = 0;
  let maxDepth = 0;
  let deepestAt = 0;
  let renderPipeAt: number | undefined;
  let lastTopPipe = -1;
  let afterPipe = false;
  let statementAfterRender = false;
  const datatableValues: Span[] = [];
  // datatable state: 0 none, 1 saw `datatable`, 2 inside its schema parens, 3 expecting `[`, 4 inside values.
  let dt = 0;
  let dtDepth = 0;
  let dtStart = 0;
  for (const t of tokens(text)) {
    if (t.kind === 'punct' && '([{'.includes(t.text)) {
      depth++;
      if (depth > maxDepth) {
        maxDepth = depth;
        deepestAt = t.start;
      }
    } else if (t.kind === 'punct' && ')]}'.includes(t.text)) {
      depth = Math.max(0, depth - 1);
    }
    // A trailing render clause: a top-level `| render`, with no other statement after it.
    if (statementAfterRender) renderPipeAt = undefined;
    const isTopPipe = t.kind === 'punct' && t.text === '|' && depth === 0;
    if (isTopPipe) {
      lastTopPipe = t.start;
      renderPipeAt = undefined;
      statementAfterRender = false;
    } else if (afterPipe && t.kind === 'word' && t.text === 'render') {
      renderPipeAt = lastTopPipe;
    } else if (t.kind === 'punct' && t.text === ';' && depth === 0 && renderPipeAt !== undefined) {
      statementAfterRender = true;
    }
    afterPipe = isTopPipe;

    // datatable (schema) [ values ]
    if (dt === 0 && t.kind === 'word' && t.text === 'datatable') {
      dt = 1;
    } else if (dt === 1) {
      if (t.kind === 'punct' && t.text === '(') {
        dt = 2;
        dtDepth = depth;
      } else if (!(t.kind === 'word' && t.text === 'with')) dt = 0;
    } else if (dt === 2) {
      if (t.kind === 'punct' && t.text === ')' && depth === dtDepth - 1) dt = 3;
    } else if (dt === 3) {
      if (t.kind === 'punct' && t.text === '[') {
        dt = 4;
        dtDepth = depth;
        dtStart = t.end;
      } else if (t.kind === 'punct' && t.text === '(') {
        dt = 2; // `datatable with (props) (schema)`
        dtDepth = depth;
      } else dt = 0;
    } else if (dt === 4) {
      if (t.kind === 'punct' && t.text === ']' && depth === dtDepth - 1) {
        datatableValues.push({ start: dtStart, end: t.start });
        dt = 0;
      }
    }
  }
  const result: PrescanResult = { maxDepth, deepestAt, datatableValues };
  if (renderPipeAt !== undefined) result.renderPipeAt = renderPipeAt;
  return result;
}

/** Tokens of a render clause: `render chart [with (name = value, …)]`. */
interface RenderToken {
  kind: 'word' | 'string' | 'number' | 'punct';
  text: string;
  value?: string | number;
  span: Span;
}

export function tokenizeRender(text: string, offset: number): RenderToken[] | { error: string; at: number } {
  const out: RenderToken[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? text.length : eol + 1;
      continue;
    }
    const start = i;
    if (/[A-Za-z_]/.test(c)) {
      while (i < text.length && /[\w-]/.test(text[i] as string)) i++;
      out.push({ kind: 'word', text: text.slice(start, i), span: { start: offset + start, end: offset + i } });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '-' && /[0-9]/.test(text[i + 1] ?? ''))) {
      i++;
      while (i < text.length && /[0-9.eE+-]/.test(text[i] as string)) i++;
      const raw = text.slice(start, i);
      const value = Number(raw);
      if (!Number.isFinite(value)) return { error: `Invalid number '${raw}'.`, at: offset + start };
      out.push({ kind: 'number', text: raw, value, span: { start: offset + start, end: offset + i } });
      continue;
    }
    if (c === '"' || c === "'") {
      let value = '';
      i++;
      let closed = false;
      while (i < text.length) {
        const d = text[i] as string;
        if (d === '\\' && i + 1 < text.length) {
          const e = text[i + 1] as string;
          value += e === 'n' ? '\n' : e === 't' ? '\t' : e;
          i += 2;
          continue;
        }
        if (d === c) {
          closed = true;
          i++;
          break;
        }
        value += d;
        i++;
      }
      if (!closed) return { error: 'Unterminated string literal.', at: offset + start };
      out.push({ kind: 'string', text: text.slice(start, i), value, span: { start: offset + start, end: offset + i } });
      continue;
    }
    if ('(),=|'.includes(c)) {
      out.push({ kind: 'punct', text: c, span: { start: offset + i, end: offset + i + 1 } });
      i++;
      continue;
    }
    return { error: `Unexpected character '${c}' in render clause.`, at: offset + i };
  }
  return out;
}
