import type { Metadata, ServerUnaryCall, ServerWritableStream, sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js';
import { StrataError } from '../errors.js';
import { errorFields, type Logger } from '../logging.js';
import { toServiceError } from './status.js';

/** What a handler gets besides its request: cancellation, deadline and caller metadata. */
export interface CallContext {
  /** Aborted when the caller cancels or its deadline passes. */
  signal: AbortSignal;
  /** Absolute deadline in ms since the epoch, or undefined for none. */
  deadlineMs: number | undefined;
  metadata: Metadata;
  method: string;
}

export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;
/** A server-streaming handler writes messages with `send` and resolves when done. */
export type StreamHandler<Req, Res> = (request: Req, send: (message: Res) => Promise<void>, ctx: CallContext) => Promise<void>;

function contextOf(call: ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>, method: string) {
  const controller = new AbortController();
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : Number.isFinite(deadline) ? Number(deadline) : undefined;
  let timer: NodeJS.Timeout | undefined;
  if (deadlineMs !== undefined) {
    timer = setTimeout(
      () => controller.abort(new StrataError('timeout', `${method} timed out.`)),
      Math.max(0, deadlineMs - Date.now()),
    );
    timer.unref();
  }
  // grpc-js reports 'cancelled' after every call, also once the status was sent: only a call
  // whose handler is still running is cancelled (and only then is the error made, ~20 µs a call).
  const onCancelled = () => controller.abort(new StrataError('cancelled', `${method} was cancelled.`));
  call.once('cancelled', onCancelled);
  const ctx: CallContext = { signal: controller.signal, deadlineMs, metadata: call.metadata, method };
  const done = () => {
    if (timer) clearTimeout(timer);
    call.removeListener('cancelled', onCancelled);
  };
  return { ctx, done };
}

/**
 * The one error policy of every gRPC service: a StrataError keeps its kind and message; any
 * other error is logged with its stack and answered as a generic internal error.
 */
function policyError(err: unknown, method: string, log: Logger) {
  if (err instanceof StrataError) return toServiceError(err);
  log.error({ method, ...errorFields(err) }, 'unhandled error in gRPC handler');
  return toServiceError(new StrataError('internal', 'Internal error.'));
}

export function unary<Req, Res>(method: string, handler: UnaryHandler<Req, Res>, log: Logger) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    const { ctx, done } = contextOf(call as ServerUnaryCall<unknown, unknown>, method);
    handler(call.request, ctx).then(
      (res) => {
        done();
        callback(null, res);
      },
      (err: unknown) => {
        done();
        callback(policyError(err, method, log), null);
      },
    );
  };
}

export function serverStream<Req, Res>(method: string, handler: StreamHandler<Req, Res>, log: Logger) {
  return (call: ServerWritableStream<Req, Res>) => {
    const { ctx, done } = contextOf(call as ServerWritableStream<unknown, unknown>, method);
    // Honour back-pressure: wait for 'drain' when the stream's buffer is full.
    const send = (message: Res) =>
      new Promise<void>((resolve, reject) => {
        if (ctx.signal.aborted) return reject(ctx.signal.reason);
        if (call.write(message)) resolve();
        else call.once('drain', () => resolve());
      });
    handler(call.request, send, ctx).then(
      () => {
        done();
        call.end();
      },
      (err: unknown) => {
        done();
        call.emit('error', policyError(err, method, log));
      },
    );
  };
}

/** Handlers for every method of a ts-proto generated service definition. */
export type HandlersOf<Def> = {
  [K in keyof Def]: Def[K] extends {
    requestStream: false;
    responseStream: false;
    requestDeserialize: (b: Buffer) => infer Req;
    responseSerialize: (r: infer Res) => Buffer;
  }
    ? UnaryHandler<Req, Res>
    : Def[K] extends {
          requestStream: false;
          responseStream: true;
          requestDeserialize: (b: Buffer) => infer Req;
          responseSerialize: (r: infer Res) => Buffer;
        }
      ? StreamHandler<Req, Res>
      : never;
};

/**
 * Builds a grpc-js service implementation from plain async handlers, applying the shared error
 * policy, deadlines and cancellation to every method.
 */
export function implementService<Def extends Record<string, { path: string; requestStream: boolean; responseStream: boolean }>>(
  definition: Def,
  handlers: HandlersOf<Def>,
  log: Logger,
): UntypedServiceImplementation {
  const impl: UntypedServiceImplementation = {};
  for (const name of Object.keys(definition)) {
    const def = definition[name] as { path: string; requestStream: boolean; responseStream: boolean };
    const handler = (handlers as Record<string, unknown>)[name];
    if (typeof handler !== 'function') throw new Error(`missing handler for ${def.path}`);
    if (def.requestStream) throw new Error(`client streaming is not supported: ${def.path}`);
    impl[name] = def.responseStream
      ? serverStream(def.path, handler as StreamHandler<unknown, unknown>, log)
      : unary(def.path, handler as UnaryHandler<unknown, unknown>, log);
  }
  return impl;
}
