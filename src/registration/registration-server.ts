/**
 * The plugin side of the registration handshake: a gRPC server on a unix
 * socket that answers GetInfo and records NotifyRegistrationStatus, plus the
 * example v1beta1/v1beta2 services the kubelet's test plugin serves.
 *
 * Unlike upstream's example plugin (an unbuffered channel that blocks Notify
 * until someone reads it), every status is recorded at once and handed out by
 * `nextStatus()`, so a slow test can never stall the registrar's RPC.
 * Behaviour knobs let tests make GetInfo slow or hang and Notify fail.
 */
import { lstat, mkdir, unlink } from 'node:fs/promises';
import { dirname, resolve as resolvePath } from 'node:path';
import { create } from '@bufbuild/protobuf';
import {
  status as grpcStatus,
  Server,
  type ServerUnaryCall,
  type ServiceError,
  type sendUnaryData,
} from '@grpc/grpc-js';
import {
  BerthError,
  errorMessage,
  type Lifecycle,
  LifecycleController,
  type LifecycleState,
} from '../common/index.js';
import { listenUnixGrpc, shutdownUnixGrpc, type UnixGrpcListener } from '../unix-grpc/index.js';
import { UNIX_SOCKET_PATH_MAX_BYTES } from '../unix-grpc/unix-grpc-options.js';
import { ExampleResponseSchema as ExampleResponseV1beta1Schema } from './gen/example/v1beta1/example_pb.js';
import { ExampleResponseSchema as ExampleResponseV1beta2Schema } from './gen/example/v1beta2/example_pb.js';
import {
  type PluginInfo,
  PluginInfoSchema,
  type RegistrationStatus as RegistrationStatusMessage,
  type RegistrationStatusResponse,
  RegistrationStatusResponseSchema,
} from './gen/pluginregistration/api_pb.js';
import type { RegistrationInfo, RegistrationStatus } from './types.js';
import { type ExampleVersion, exampleServices, exampleVersions, registrationService } from './wire.js';

/** Test knobs; the object is live, so a test may flip them between attempts. */
export interface RegistrationServerBehaviour {
  /** Answer GetInfo only after this many (real) milliseconds. */
  getInfoDelayMs?: number;
  /** Answer every NotifyRegistrationStatus with a gRPC INTERNAL error (the status is still recorded). */
  failNotify?: boolean;
  /** Never answer GetInfo (the caller's deadline decides). */
  hangGetInfo?: boolean;
}

export interface RegistrationServerOptions {
  socketPath: string;
  /** What GetInfo returns; a function is asked on every call. */
  info: RegistrationInfo | (() => RegistrationInfo | Promise<RegistrationInfo>);
  /** Example API versions to serve besides Registration. Default: none. */
  services?: Array<ExampleVersion>;
  behaviour?: RegistrationServerBehaviour;
}

/** How long stop() lets in-flight calls finish before cancelling them (upstream waits 1 s). */
const GRACEFUL_STOP_MS = 1000;
const DEFAULT_NEXT_STATUS_TIMEOUT_MS = 30_000;

interface StatusWaiter {
  resolve: (status: RegistrationStatus) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

export function createRegistrationServer(options: RegistrationServerOptions): RegistrationServer {
  return new RegistrationServer(options);
}

/**
 * Lifecycle (common/lifecycle.ts), with one exception the plugin side needs:
 * a stopped server may be started again (a plugin restarting on the same
 * path), on a fresh lifecycle.
 */
export class RegistrationServer implements Lifecycle {
  readonly socketPath: string;
  readonly behaviour: RegistrationServerBehaviour;
  readonly services: readonly ExampleVersion[];
  readonly #info: RegistrationServerOptions['info'];
  readonly #statuses: RegistrationStatus[] = [];
  #consumed = 0;
  readonly #waiters: StatusWaiter[] = [];
  readonly #delayTimers = new Set<NodeJS.Timeout>();
  #getInfoCalls = 0;
  #server: Server | undefined;
  #listener: UnixGrpcListener | undefined;
  #life = this.#newLifecycle();
  /** The listen in progress: stop waits for it, so it never leaves a server behind. */
  #listening: Promise<void> | undefined;

  constructor(options: RegistrationServerOptions) {
    if (typeof options.socketPath !== 'string' || options.socketPath === '') {
      throw new BerthError('BERTH_SOCKET_PATH_EMPTY', 'socket path is empty');
    }
    const bytes = Buffer.byteLength(options.socketPath);
    if (bytes > UNIX_SOCKET_PATH_MAX_BYTES) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `socket path ${options.socketPath} is too long (${bytes} bytes; unix sockets allow ${UNIX_SOCKET_PATH_MAX_BYTES})`,
      );
    }
    const services = options.services ?? [];
    for (const service of services) {
      if (!exampleVersions.includes(service)) {
        throw new BerthError('BERTH_INVALID_ARGUMENT', `unsupported service: '${String(service)}'`);
      }
    }
    this.socketPath = options.socketPath;
    this.services = [...services];
    this.#info = options.info;
    this.behaviour = { ...options.behaviour };
  }

  /** Every NotifyRegistrationStatus received, in arrival order. */
  get statuses(): readonly RegistrationStatus[] {
    return this.#statuses;
  }

  get getInfoCalls(): number {
    return this.#getInfoCalls;
  }

  get listening(): boolean {
    return this.#server !== undefined && this.state === 'running';
  }

  get state(): LifecycleState {
    return this.#life.state;
  }

  #newLifecycle(): LifecycleController {
    return new LifecycleController({
      onStart: () => {
        this.#listening = this.#listen();
        return this.#listening;
      },
      onStop: () => this.#shutdown(),
    });
  }

  /** Binds the socket (replacing a leftover socket file) and serves. Resolves once listening. */
  start(signal?: AbortSignal): Promise<void> {
    const life = this.#life;
    if (life.state === 'stopping' || life.state === 'stopped') {
      // A stopped (or failed) server may be started again: a plugin restarting on the same path.
      return life.stop().then(() => {
        if (this.#life === life) this.#life = this.#newLifecycle();
        return this.start(signal);
      });
    }
    return life.start(signal);
  }

  async #listen(): Promise<void> {
    const path = this.socketPath;
    await mkdir(dirname(resolvePath(path)), { recursive: true });
    await removeLeftoverSocket(path);
    const server = new Server();
    server.addService(registrationService, {
      getInfo: (call: ServerUnaryCall<unknown, PluginInfo>, callback: sendUnaryData<PluginInfo>) =>
        this.#onGetInfo(call, callback),
      notifyRegistrationStatus: (
        call: ServerUnaryCall<RegistrationStatusMessage, RegistrationStatusResponse>,
        callback: sendUnaryData<RegistrationStatusResponse>,
      ) => this.#onNotify(call, callback),
    });
    for (const version of this.services) {
      const responseSchema =
        version === 'v1beta1' ? ExampleResponseV1beta1Schema : ExampleResponseV1beta2Schema;
      server.addService(exampleServices[version], {
        getExampleInfo: (_call: unknown, callback: sendUnaryData<unknown>) =>
          callback(null, create(responseSchema)),
      });
    }
    try {
      this.#listener = await listenUnixGrpc(server, path);
    } catch (err) {
      server.forceShutdown();
      throw new BerthError('BERTH_INTERNAL', `cannot listen on plugin socket ${path}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    this.#server = server;
  }

  #onGetInfo(_call: unknown, callback: sendUnaryData<PluginInfo>): void {
    this.#getInfoCalls += 1;
    if (this.behaviour.hangGetInfo) return; // answered never; stop() cancels the call
    const answer = () => {
      void this.#currentInfo().then(
        (info) =>
          callback(
            null,
            create(PluginInfoSchema, { ...info, supportedVersions: [...info.supportedVersions] }),
          ),
        (err: unknown) => callback(serviceError(grpcStatus.INTERNAL, `GetInfo failed: ${errorMessage(err)}`)),
      );
    };
    const delay = this.behaviour.getInfoDelayMs ?? 0;
    if (delay <= 0) {
      answer();
      return;
    }
    const timer = setTimeout(() => {
      this.#delayTimers.delete(timer);
      answer();
    }, delay);
    this.#delayTimers.add(timer);
  }

  async #currentInfo(): Promise<RegistrationInfo> {
    return typeof this.#info === 'function' ? await this.#info() : this.#info;
  }

  #onNotify(
    call: ServerUnaryCall<RegistrationStatusMessage, RegistrationStatusResponse>,
    callback: sendUnaryData<RegistrationStatusResponse>,
  ): void {
    const status: RegistrationStatus = {
      pluginRegistered: call.request.pluginRegistered,
      error: call.request.error,
    };
    this.#statuses.push(status);
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      this.#consumed += 1;
      clearTimeout(waiter.timer);
      waiter.resolve(status);
    }
    if (this.behaviour.failNotify) {
      callback(serviceError(grpcStatus.INTERNAL, 'NotifyRegistrationStatus rejected (failNotify behaviour)'));
    } else {
      callback(null, create(RegistrationStatusResponseSchema));
    }
  }

  /**
   * The next status not yet handed out by an earlier call (statuses that
   * arrived before the call count). Rejects after `timeoutMs` (default 30 s)
   * or when the server stops.
   */
  nextStatus(timeoutMs = DEFAULT_NEXT_STATUS_TIMEOUT_MS): Promise<RegistrationStatus> {
    const buffered = this.#statuses[this.#consumed];
    if (buffered !== undefined && this.#waiters.length === 0) {
      this.#consumed += 1;
      return Promise.resolve(buffered);
    }
    return new Promise((resolve, reject) => {
      const waiter: StatusWaiter = { resolve, reject, timer: undefined };
      if (Number.isFinite(timeoutMs)) {
        waiter.timer = setTimeout(() => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for a registration status on ${this.socketPath}`,
            ),
          );
        }, timeoutMs);
      }
      this.#waiters.push(waiter);
    });
  }

  /** Stops serving (cancelling calls still running after ~1 s) and removes the socket file. Idempotent. */
  stop(): Promise<void> {
    return this.#life.stop();
  }

  async #shutdown(): Promise<void> {
    await this.#listening?.catch(() => undefined);
    this.#listening = undefined;
    for (const timer of this.#delayTimers) clearTimeout(timer);
    this.#delayTimers.clear();
    for (const waiter of this.#waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new BerthError('BERTH_SHUT_DOWN', `plugin server on ${this.socketPath} stopped`));
    }
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    const listener = this.#listener;
    this.#listener = undefined;
    // Calls still running get GRACEFUL_STOP_MS to finish, then are cancelled.
    await shutdownUnixGrpc(server, listener, GRACEFUL_STOP_MS);
    await this.#removeSocketFile();
  }

  /**
   * Closing the listener already unlinks the path (libuv does, as Go's
   * listener does), so this only tidies up after a failed close. Like
   * upstream, a successor that bound the same path before we stopped loses
   * its file: stop the old instance first.
   */
  async #removeSocketFile(): Promise<void> {
    try {
      await unlink(this.socketPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }
}

async function removeLeftoverSocket(path: string): Promise<void> {
  try {
    const stats = await lstat(path);
    if (!stats.isSocket()) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `cannot listen on ${path}: a file that is not a socket is in the way`,
      );
    }
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function serviceError(code: grpcStatus, details: string): Partial<ServiceError> {
  return { code, details, message: details };
}
