/**
 * StrataError is the one error type that crosses role boundaries. Its `kind` decides the HTTP
 * status and the gRPC status; its `message` is stable text that clients may show (the documented
 * messages of docs/api.md word for word). Anything that is not a StrataError is an internal error:
 * logged in full, answered with a generic message.
 */
export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'resource_exhausted'
  | 'insufficient_storage'
  | 'unavailable'
  | 'timeout'
  | 'cancelled'
  | 'internal';

/** A message with character ranges into the request text (used by query errors). */
export interface ErrorDetail {
  message: string | null;
  tokens: { start: number; end: number }[];
}

export class StrataError extends Error {
  readonly kind: ErrorKind;
  readonly details: ErrorDetail[];
  /** Seconds a client should wait before retrying (503/507 answers). */
  readonly retryAfterSeconds?: number;

  constructor(
    kind: ErrorKind,
    message: string,
    options?: { details?: ErrorDetail[]; retryAfterSeconds?: number; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StrataError';
    this.kind = kind;
    this.details = options?.details ?? [];
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

/**
 * The abort reason given to the signals of a query that ended (what still listens stops). One
 * shared instance: making an Error captures its stack (~20 µs, a few times per query on the small
 * query path, decision 0032), and this reason is never an answer — a query that finished has one.
 */
export const QUERY_FINISHED = new StrataError('cancelled', 'The query finished.');

export const invalid = (message: string, details?: ErrorDetail[]) => new StrataError('invalid', message, { details });
export const notFound = (message: string) => new StrataError('not_found', message);
export const forbidden = (message = 'No permission.') => new StrataError('forbidden', message);
export const unauthenticated = (message = 'Authentication required.') => new StrataError('unauthenticated', message);
export const conflict = (message: string) => new StrataError('conflict', message);
export const unavailable = (message: string, retryAfterSeconds?: number) =>
  new StrataError('unavailable', message, { retryAfterSeconds });

export const HTTP_STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  resource_exhausted: 429,
  insufficient_storage: 507,
  unavailable: 503,
  timeout: 504,
  cancelled: 499,
  internal: 500,
};

export function isStrataError(err: unknown): err is StrataError {
  return err instanceof StrataError;
}
