import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { SERVER_OPTIONS } from './client.js';

/** Starts a gRPC server on host:port (port 0 picks a free one) and returns the bound port. */
export async function startGrpcServer(
  address: string,
  services: { definition: ServiceDefinition | Record<string, unknown>; implementation: UntypedServiceImplementation }[],
): Promise<{ server: Server; port: number }> {
  const server = new Server(SERVER_OPTIONS);
  for (const s of services) server.addService(s.definition as ServiceDefinition, s.implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { server, port };
}

/** Stops accepting calls, lets running ones finish for up to `graceMs`, then forces shutdown. */
export function stopGrpcServer(server: Server, graceMs = 5_000): Promise<void> {
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
