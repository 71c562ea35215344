/**
 * The legacy (push) way in: berth serves `v1beta1.Registration/Register` on a
 * kubelet.sock-style socket. The plugin names its endpoint relative to the
 * socket's directory. Version and resource-name checks answer with the
 * kubelet's texts; a failed connect goes back to the plugin as the error of
 * its Register call (gRPC status UNKNOWN, as grpc-go reports a plain error).
 */

import { lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { isAbsolute, join, normalize } from 'node:path';
import type { Server, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { BerthError, errorMessage, LifecycleComponent, type Logger, loadOnce } from '../../common/index.js';
import { listenUnixGrpc, shutdownUnixGrpc, type UnixGrpcListener } from '../../unix-grpc/index.js';
import { goQuote, goQuotedList } from '../go-format.js';
import { isExtendedResourceName } from '../resource-name.js';
import { LEGACY_SOCKET, SUPPORTED_DEVICE_PLUGIN_VERSIONS } from './device-plugin-options.js';
import type { RegisterRequest } from './device-plugin-wire.js';

/** The Registration service's server side (grpc-js, the v1beta1 messages), loaded with the first connection. */
const deviceGrpc = loadOnce(() => import('./device-plugin-grpc.js'));

/** The registration socket's file name inside its directory. */
export const KUBELET_SOCKET_NAME = LEGACY_SOCKET.name;
const CLOSE_GRACE_MS = 2_000;

export type LegacyConnect = (resource: string, endpointPath: string) => Promise<void>;

/** Checks a RegisterRequest and resolves its endpoint; returns the kubelet's error text on failure. */
export function checkRegisterRequest(
  request: Pick<RegisterRequest, 'version' | 'endpoint' | 'resourceName'>,
  socketDir: string,
): { endpointPath: string } | { error: string } {
  if (!SUPPORTED_DEVICE_PLUGIN_VERSIONS.includes(request.version)) {
    return {
      error: `requested API version ${goQuote(request.version)} is not supported by kubelet. Supported version is ${goQuotedList(SUPPORTED_DEVICE_PLUGIN_VERSIONS)}`,
    };
  }
  if (!isExtendedResourceName(request.resourceName)) {
    return { error: `the ResourceName ${goQuote(request.resourceName)} is invalid` };
  }
  // berth, unlike the kubelet, refuses endpoints that leave the directory.
  const endpoint = request.endpoint;
  const clean = normalize(endpoint);
  if (endpoint === '' || isAbsolute(endpoint) || clean === '..' || clean.startsWith('../') || clean === '.') {
    return {
      error: `bad endpoint ${goQuote(endpoint)}: it must be a socket file name relative to ${socketDir}`,
    };
  }
  if (clean === KUBELET_SOCKET_NAME) {
    return { error: `bad endpoint ${goQuote(endpoint)}: that is the registration socket itself` };
  }
  return { endpointPath: join(socketDir, clean) };
}

/**
 * Lifecycle (common/lifecycle.ts): start() creates the directory and serves;
 * stop() gives a Register in flight a moment, then closes and removes the socket.
 */
export class LegacyRegistrationServer extends LifecycleComponent {
  /** Built with the first connection (listenUnixGrpc): a daemon no plugin dials loads no gRPC. */
  #server: Server | undefined;
  readonly socketPath: string;
  #listener: UnixGrpcListener | undefined;

  constructor(
    readonly socketDir: string,
    readonly connectPlugin: LegacyConnect,
    readonly logger: Logger,
  ) {
    super();
    this.socketPath = join(socketDir, KUBELET_SOCKET_NAME);
  }

  async #buildServer(): Promise<Server> {
    const { create, deviceRegistrationService, EmptySchema, Server, status } = await deviceGrpc();
    // A stop that began while gRPC loaded found no server to shut down: refuse the connection.
    if (this.state === 'stopping' || this.state === 'stopped') {
      throw new Error('the legacy registration server is stopping');
    }
    const server = new Server();
    server.addService(deviceRegistrationService, {
      register: (call: ServerUnaryCall<RegisterRequest, unknown>, callback: sendUnaryData<unknown>) => {
        void this.#register(call.request).then(
          () => callback(null, create(EmptySchema)),
          (err) => callback({ code: status.UNKNOWN, details: errorMessage(err) }),
        );
      },
    });
    this.#server = server;
    return server;
  }

  async #register(request: RegisterRequest): Promise<void> {
    const checked = checkRegisterRequest(request, this.socketDir);
    if ('error' in checked) {
      this.logger.warn({ resource: request.resourceName, endpoint: request.endpoint }, checked.error);
      throw new Error(checked.error);
    }
    this.logger.info(
      { resource: request.resourceName, endpoint: checked.endpointPath },
      'device plugin registered through the legacy socket',
    );
    await this.connectPlugin(request.resourceName, checked.endpointPath);
  }

  /** Creates the directory, replaces a stale socket file, and serves. */
  protected override async onStart(): Promise<void> {
    try {
      mkdirSync(this.socketDir, { recursive: true, mode: 0o750 });
    } catch (err) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `cannot create the device plugin directory ${this.socketDir}: ${errorMessage(err)}; set devicePlugins.socketDir`,
        { cause: err },
      );
    }
    await removeStaleSocket(this.socketPath);
    try {
      this.#listener = await listenUnixGrpc(() => this.#buildServer(), this.socketPath, {
        onRefused: (err) =>
          this.logger.warn({ err, socket: this.socketPath }, 'closed a registration connection'),
      });
    } catch (err) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `cannot serve device plugin registration on ${this.socketPath}: ${errorMessage(err)}`,
        { cause: err },
      );
    }
  }

  protected override async onStop(): Promise<void> {
    // Only a socket this server bound is removed: when the start failed because another
    // process serves the path (a kubelet, another berth), that process keeps its socket file.
    const bound = this.#listener !== undefined;
    // A Register still dialling its plugin gets a moment to finish, then is cut off.
    await shutdownUnixGrpc(this.#server, this.#listener, CLOSE_GRACE_MS);
    if (bound) {
      try {
        unlinkSync(this.socketPath);
      } catch {
        // Already gone: closing the listener unlinks it.
      }
    }
  }
}

/** Removes a socket file nobody listens on; refuses to take over one that answers. */
async function removeStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return;
  }
  if (!isSocket) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `${path} exists and is not a socket; remove it or choose another devicePlugins.socketDir`,
    );
  }
  const answers = await new Promise<boolean>((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
  if (answers) {
    throw new BerthError(
      'BERTH_DAEMON_RUNNING',
      `another process serves ${path} (a kubelet or another berth?); choose another devicePlugins.socketDir`,
    );
  }
  unlinkSync(path);
}
