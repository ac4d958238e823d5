import { type ErrorDetail, HTTP_STATUS_BY_KIND, StrataError } from '@strata/common';

/**
 * The error body of every non-2xx answer (the clients' `ApiErrorModel`): `message`, `stackTrace`
 * (always null: stacks stay in the logs) and `errors` (each with character ranges into the request
 * text, for query errors).
 */
export interface ErrorBody {
  message: string;
  stackTrace: null;
  errors: ErrorDetail[];
}

export function errorBody(message: string, errors: ErrorDetail[] = []): ErrorBody {
  return { message, stackTrace: null, errors };
}

/** Maps any thrown value to a status and body; non-Strata errors become a generic 500. */
export function errorResponse(err: unknown): { status: number; body: ErrorBody; retryAfterSeconds?: number; internal: boolean } {
  if (err instanceof StrataError) {
    return {
      status: HTTP_STATUS_BY_KIND[err.kind],
      body: errorBody(err.message, err.details),
      retryAfterSeconds: err.retryAfterSeconds,
      internal: err.kind === 'internal',
    };
  }
  return { status: 500, body: errorBody('Internal server error.'), internal: true };
}
