/**
 * A real grpc-js server on a unix socket serving the given services, for
 * tests that need a plugin's own API (a CSI driver, a DRA driver) beside its
 * registration socket.
 */
import { rm } from 'node:fs/promises';
import { Server, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { listenUnixGrpc } from '../../unix-grpc/index.js';

export interface GrpcTestServer extends AsyncDisposable {
  readonly socketPath: string;
  /** Stops at once (cancelling calls) and removes the socket file; safe to call twice. */
  stop(): Promise<void>;
}

export async function startGrpcTestServer(
  socketPath: string,
  services: ReadonlyArray<[ServiceDefinition, UntypedServiceImplementation]>,
): Promise<GrpcTestServer> {
  await rm(socketPath, { force: true });
  const server = new Server();
  for (const [definition, implementation] of services) server.addService(definition, implementation);
  const listener = await listenUnixGrpc(server, socketPath);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      void listener.close();
      server.forceShutdown();
      await rm(socketPath, { force: true });
    })();
    return stopping;
  };
  return { socketPath, stop, [Symbol.asyncDispose]: stop };
}

/** A unary method of raw bytes, `/test.Echo/Say`: a service of one method for transport tests. */
export const ECHO_METHOD = {
  path: '/test.Echo/Say',
  requestStream: false,
  responseStream: false,
  requestSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (b: Buffer) => b,
  responseDeserialize: (b: Buffer) => b,
} as const;

/** A gRPC error with a status code, as a server handler passes it to its callback. */
export function grpcServiceError(code: number, details: string): Error & { code: number; details: string } {
  return Object.assign(new Error(details), { code, details });
}
