import {
  type Server as GrpcServer,
  type handleServerStreamingCall,
  type handleUnaryCall,
  Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { StrataError } from '../errors.js';
import { SERVER_OPTIONS } from './client.js';
import type { InternalIdentity } from './internal-identity.js';
import { type RoleName, rolesOfSubjectAltName } from './role-identity.js';
import { callersOf, splitMethodPath } from './service-access.js';
import { toServiceError } from './status.js';

export interface ServiceRegistration {
  definition: ServiceDefinition | Record<string, unknown>;
  implementation: UntypedServiceImplementation;
}

/** Told about every refused call (logged by the role; counted in tests). */
export type RefusalListener = (refusal: { method: string; peer: string; roles: RoleName[] }) => void;

/**
 * Starts a gRPC server on host:port (port 0 picks a free one) and returns the bound port.
 *
 * Every call is authenticated: the TLS handshake demands a client certificate signed by the
 * cluster's CA (a caller without one never reaches grpc-js' routing), and before any handler runs
 * the caller's certificate must hold a role that SERVICE_ACCESS allows for that method. A service
 * without an access rule refuses to start.
 */
export async function startGrpcServer(
  address: string,
  services: ServiceRegistration[],
  identity: InternalIdentity,
  onRefused?: RefusalListener,
): Promise<{ server: GrpcServer; port: number }> {
  const server = new Server(SERVER_OPTIONS);
  for (const s of services) {
    server.addService(s.definition as ServiceDefinition, guarded(s.definition as ServiceDefinition, s.implementation, onRefused));
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, identity.serverCredentials(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { server, port };
}

type AnyCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>;

/** The roles of the certificate the caller presented in the handshake (empty without TLS). */
export function callerRoles(call: AnyCall): Set<RoleName> {
  return rolesOfSubjectAltName(call.getAuthContext?.()?.sslPeerCertificate?.subjectaltname);
}

/** Wraps every method of `implementation` with the caller check of its service's access rule. */
function guarded(
  definition: ServiceDefinition,
  implementation: UntypedServiceImplementation,
  onRefused: RefusalListener | undefined,
): UntypedServiceImplementation {
  const out: UntypedServiceImplementation = {};
  for (const [name, def] of Object.entries(definition)) {
    const handler = implementation[name];
    if (!handler) continue;
    const { service, method } = splitMethodPath(def.path);
    const allowed = callersOf(service, method); // throws for a service without a rule
    const refuse = (call: AnyCall) => {
      const roles = callerRoles(call);
      if ([...roles].some((r) => allowed.includes(r))) return undefined;
      onRefused?.({ method: def.path, peer: call.getPeer(), roles: [...roles] });
      return toServiceError(new StrataError('forbidden', `${def.path} may be called only by the ${allowed.join(' or ')} role.`));
    };
    if (def.responseStream) {
      const inner = handler as handleServerStreamingCall<unknown, unknown>;
      out[name] = ((call: ServerWritableStream<unknown, unknown>) => {
        const refusal = refuse(call);
        if (refusal) call.emit('error', refusal);
        else inner(call);
      }) as handleServerStreamingCall<unknown, unknown>;
    } else {
      const inner = handler as handleUnaryCall<unknown, unknown>;
      out[name] = ((call: ServerUnaryCall<unknown, unknown>, callback) => {
        const refusal = refuse(call);
        if (refusal) callback(refusal, null);
        else inner(call, callback);
      }) as handleUnaryCall<unknown, unknown>;
    }
  }
  return out;
}

/** Stops accepting calls, lets running ones finish for up to `graceMs`, then forces shutdown. */
export function stopGrpcServer(server: GrpcServer, graceMs = 5_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
