import { status as GrpcStatus, Metadata, type ServiceError } from '@grpc/grpc-js';
import { type ErrorDetail, type ErrorKind, StrataError } from '../errors.js';

/** gRPC status for each error kind; the reverse map restores the kind on the calling side. */
const GRPC_BY_KIND: Record<ErrorKind, GrpcStatus> = {
  invalid: GrpcStatus.INVALID_ARGUMENT,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  conflict: GrpcStatus.ALREADY_EXISTS,
  precondition_failed: GrpcStatus.FAILED_PRECONDITION,
  payload_too_large: GrpcStatus.OUT_OF_RANGE,
  resource_exhausted: GrpcStatus.RESOURCE_EXHAUSTED,
  insufficient_storage: GrpcStatus.RESOURCE_EXHAUSTED,
  unavailable: GrpcStatus.UNAVAILABLE,
  timeout: GrpcStatus.DEADLINE_EXCEEDED,
  cancelled: GrpcStatus.CANCELLED,
  internal: GrpcStatus.INTERNAL,
};

/** Metadata key carrying the StrataError kind and details across a call. */
const ERROR_METADATA_KEY = 'strata-error';

export function toServiceError(err: StrataError): Partial<ServiceError> {
  const metadata = new Metadata();
  metadata.set(
    ERROR_METADATA_KEY,
    JSON.stringify({ kind: err.kind, details: err.details, retryAfterSeconds: err.retryAfterSeconds }),
  );
  return { code: GRPC_BY_KIND[err.kind], details: err.message, metadata };
}

/** Turns a failed call back into a StrataError, keeping kind, message and details. */
export function fromServiceError(err: ServiceError, method: string): StrataError {
  const raw = err.metadata?.get(ERROR_METADATA_KEY)?.[0];
  if (typeof raw === 'string') {
    try {
      const parsed = JSON.parse(raw) as { kind: ErrorKind; details?: ErrorDetail[]; retryAfterSeconds?: number };
      return new StrataError(parsed.kind, err.details, {
        details: parsed.details,
        retryAfterSeconds: parsed.retryAfterSeconds,
      });
    } catch {
      // fall through: treat as a transport-level failure
    }
  }
  switch (err.code) {
    case GrpcStatus.DEADLINE_EXCEEDED:
      return new StrataError('timeout', `${method} timed out.`);
    case GrpcStatus.CANCELLED:
      return new StrataError('cancelled', `${method} was cancelled.`);
    case GrpcStatus.UNAVAILABLE:
      return new StrataError('unavailable', `${method} is unavailable: ${err.details}`, { retryAfterSeconds: 1 });
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return new StrataError('resource_exhausted', `${method}: ${err.details}`);
    default:
      return new StrataError('internal', `${method} failed.`, { cause: err });
  }
}
