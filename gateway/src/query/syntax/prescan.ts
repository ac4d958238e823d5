/**
 * A light lexical pass over the raw query text that runs before Microsoft's parser. It measures
 * bracket nesting (the parser slows down sharply with depth: 1,000 parentheses take 0.5 s), and
 * finds a trailing `| render …` clause, which the engine reads itself because the product's render
 * options (`fill`, `yUnit`, `spanGaps` …) are not part of standard KQL.
 * It knows KQL's string forms ('…', "…", @'…', h'…', ```…```, ~~~…~~~) and `//` comments.
 */
import type { Span } from '../errors.js';

export interface PrescanResult {
  maxDepth: number;
  /** Where the deepest bracket opened (for the error position). */
  deepestAt: number;
  /** Offset of the `|` that starts a trailing render clause, when there is one. */
  renderPipeAt?: number;
  /** Unbalanced or unterminated constructs are left to the real parser to report. */
}

export function prescan(text: string): PrescanResult {
  let depth = 0;
  let maxDepth = 0;
  let deepestAt = 0;
  let lastTopLevelPipe = -1;
  let lastTopLevelPipeIsRender = false;
  let sawTokenAfterRender = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i] as string;
    // Comments.
    if (c === '/' && text[i + 1] === '/') {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? n : eol + 1;
      continue;
    }
    // Multi-line strings.
    if ((c === '`' || c === '~') && text.startsWith(c.repeat(3), i)) {
      const close = text.indexOf(c.repeat(3), i + 3);
      i = close < 0 ? n : close + 3;
      continue;
    }
    // Verbatim and obfuscated string prefixes.
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
      i++;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') {
      depth++;
      if (depth > maxDepth) {
        maxDepth = depth;
        deepestAt = i;
      }
    } else if (c === ')' || c === ']' || c === '}') {
      depth = Math.max(0, depth - 1);
    } else if (c === '|' && depth === 0) {
      lastTopLevelPipe = i;
      lastTopLevelPipeIsRender = /^\|\s*render\b/.test(text.slice(i, i + 64));
      sawTokenAfterRender = false;
    } else if (c === ';' && depth === 0 && lastTopLevelPipeIsRender && text.slice(i + 1).trim() !== '') {
      // Another statement after the render clause: render was not last; the parser reports it.
      sawTokenAfterRender = true;
    }
    i++;
  }
  const result: PrescanResult = { maxDepth, deepestAt };
  if (lastTopLevelPipe >= 0 && lastTopLevelPipeIsRender && !sawTokenAfterRender) result.renderPipeAt = lastTopLevelPipe;
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
  const tokens: RenderToken[] = [];
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
      tokens.push({ kind: 'word', text: text.slice(start, i), span: { start: offset + start, end: offset + i } });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '-' && /[0-9]/.test(text[i + 1] ?? ''))) {
      i++;
      while (i < text.length && /[0-9.eE+-]/.test(text[i] as string)) i++;
      const raw = text.slice(start, i);
      const value = Number(raw);
      if (!Number.isFinite(value)) return { error: `Invalid number '${raw}'.`, at: offset + start };
      tokens.push({ kind: 'number', text: raw, value, span: { start: offset + start, end: offset + i } });
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
      tokens.push({ kind: 'string', text: text.slice(start, i), value, span: { start: offset + start, end: offset + i } });
      continue;
    }
    if ('(),=|'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, span: { start: offset + i, end: offset + i + 1 } });
      i++;
      continue;
    }
    return { error: `Unexpected character '${c}' in render clause.`, at: offset + i };
  }
  return tokens;
}
