import { Client, type CallOptions as GrpcCallOptions, Metadata, type ServiceError } from '@grpc/grpc-js';
import { StrataError } from '../errors.js';
import type { InternalIdentity } from './internal-identity.js';
import type { RoleName } from './role-identity.js';
import { accessOf, splitMethodPath } from './service-access.js';
import { fromServiceError } from './status.js';

/**
 * Channel options for every inter-role connection. The 16 MB flow-control window lifts grpc-js'
 * ~92 MB/s ceiling with HTTP/2's default 64 KB window (measured: ~150 MB/s with 16 MB); messages may carry
 * columnar batches of up to 64 MB. Reconnects back off from 250 ms to at most 1 s: grpc-js'
 * default (1 s × 1.6 per attempt, up to 120 s) left a gateway answering 503 for 5–11 s after a
 * restarted worker or master was ready again; peers are few and on the cluster network, so
 * retrying each once a second costs nothing.
 */
export const CHANNEL_OPTIONS = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
  'grpc-node.flow_control_window': 16 * 1024 * 1024,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.initial_reconnect_backoff_ms': 250,
  'grpc.max_reconnect_backoff_ms': 1_000,
  // The TLS server name sent (SNI): servers are checked by role, not host name (internal-identity.ts),
  // and an IP address as server name is refused by RFC 6066 (Node warns once per process).
  'grpc.ssl_target_name_override': 'internal.strata',
} as const;

export const SERVER_OPTIONS = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
} as const;

export interface CallOptions {
  /** Deadline relative to now. Default 30 s. */
  timeoutMs?: number;
  /** Cancels the call on the server too. */
  signal?: AbortSignal;
  metadata?: Record<string, string>;
}

interface MethodDef {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestSerialize: (value: never) => Buffer;
  responseDeserialize: (value: Buffer) => unknown;
}

type Req<M> = M extends { requestSerialize: (value: infer R) => Buffer } ? R : never;
type Res<M> = M extends { responseDeserialize: (value: Buffer) => infer R } ? R : never;

/** A promise-returning client for a ts-proto service definition: `client.health({})`. */
export type PromiseClient<Def> = {
  [K in keyof Def]: Def[K] extends { responseStream: true }
    ? (request: Req<Def[K]>, options?: CallOptions) => AsyncIterable<Res<Def[K]>>
    : (request: Req<Def[K]>, options?: CallOptions) => Promise<Res<Def[K]>>;
};

const DEFAULT_TIMEOUT_MS = 30_000;

function metadataOf(options: CallOptions): Metadata {
  const md = new Metadata();
  for (const [k, v] of Object.entries(options.metadata ?? {})) md.set(k, v);
  return md;
}

function grpcOptions(options: CallOptions): Partial<GrpcCallOptions> {
  return { deadline: Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS) };
}

/**
 * One HTTP/2 channel per endpoint and server role, shared by every service of that role there.
 * Channels are mutual TLS with the process's identity; each one accepts only a server whose
 * certificate holds the role the called service belongs to (SERVICE_ACCESS).
 */
export class ChannelPool {
  private readonly channels = new Map<string, Client>();

  constructor(private readonly identity: InternalIdentity) {}

  channel(endpoint: string, serverRole: RoleName): Client {
    const key = `${serverRole}@${endpoint}`;
    let client = this.channels.get(key);
    if (!client) {
      client = new Client(endpoint, this.identity.channelCredentials(serverRole), CHANNEL_OPTIONS);
      this.channels.set(key, client);
    }
    return client;
  }

  /** Closes and forgets the channels of an endpoint (e.g. a worker that left). */
  drop(endpoint: string): void {
    for (const [key, client] of this.channels) {
      if (key.slice(key.indexOf('@') + 1) !== endpoint) continue;
      client.close();
      this.channels.delete(key);
    }
  }

  close(): void {
    for (const c of this.channels.values()) c.close();
    this.channels.clear();
  }

  client<Def extends Record<string, MethodDef>>(definition: Def, endpoint: string): PromiseClient<Def> {
    const first = Object.values(definition)[0];
    if (!first) throw new Error('a gRPC client needs a service definition with methods');
    const channel = this.channel(endpoint, accessOf(splitMethodPath(first.path).service).server);
    const out: Record<string, unknown> = {};
    for (const [name, def] of Object.entries(definition)) {
      out[name] = def.responseStream
        ? (request: unknown, options: CallOptions = {}) => streamCall(channel, def, request, options)
        : (request: unknown, options: CallOptions = {}) => unaryCall(channel, def, request, options);
    }
    return out as PromiseClient<Def>;
  }
}

function unaryCall(channel: Client, def: MethodDef, request: unknown, options: CallOptions): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new StrataError('cancelled', `${def.path} was cancelled.`));
    const call = channel.makeUnaryRequest(
      def.path,
      def.requestSerialize as (v: unknown) => Buffer,
      def.responseDeserialize,
      request,
      metadataOf(options),
      grpcOptions(options),
      (err: ServiceError | null, res?: unknown) => {
        options.signal?.removeEventListener('abort', onAbort);
        if (err) reject(fromServiceError(err, def.path));
        else resolve(res);
      },
    );
    const onAbort = () => call.cancel();
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function* streamCall(channel: Client, def: MethodDef, request: unknown, options: CallOptions): AsyncIterable<unknown> {
  const call = channel.makeServerStreamRequest(
    def.path,
    def.requestSerialize as (v: unknown) => Buffer,
    def.responseDeserialize,
    request,
    metadataOf(options),
    grpcOptions(options),
  );
  const onAbort = () => call.cancel();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const message of call) yield message;
  } catch (err) {
    throw (err as ServiceError).code !== undefined ? fromServiceError(err as ServiceError, def.path) : err;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    call.cancel();
  }
}
