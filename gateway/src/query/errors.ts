import { StrataError } from '@strata/common';

/** A character range [start, end) into the query text. */
export interface Span {
  start: number;
  end: number;
}

/**
 * A query the engine refuses: HTTP 400 with the message and the token positions that clients
 * (logsh, the TUI) underline in the query text.
 */
export function queryError(message: string, span?: Span | readonly Span[]): StrataError {
  const spans = span === undefined ? [] : Array.isArray(span) ? span : [span as Span];
  return new StrataError('invalid', message, {
    details: [{ message, tokens: spans.map((s) => ({ start: s.start, end: Math.max(s.start, s.end) })) }],
  });
}

export function unsupportedOperator(name: string, span: Span): StrataError {
  return queryError(`The operator '${name}' is not supported.`, span);
}
