/**
 * berth's client of one device plugin endpoint: a fresh gRPC channel to its
 * unix socket, the unary calls with deadlines, and the one ListAndWatch
 * stream. `close()` cancels the stream without reporting it as ended, so a
 * client that was replaced can never tear down its successor.
 */
import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { create } from '@bufbuild/protobuf';
import {
  Client,
  type ClientReadableStream,
  credentials,
  Metadata,
  type MethodDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { BerthError, errorMessage } from '../../common/index.js';
import {
  AllocateRequestSchema,
  type AllocateResponse,
  devicePluginMethods,
  EmptySchema,
  type ListAndWatchResponse,
  PreferredAllocationRequestSchema,
  PreStartContainerRequestSchema,
} from './device-plugin-wire.js';
import type { AllocationResult, DevicePluginOptionsView } from './types.js';

export interface PluginClientOptions {
  dialTimeoutMs: number;
  maxMessageBytes: number;
  signal?: AbortSignal;
}

export interface StreamHandlers {
  onSnapshot(response: ListAndWatchResponse): void;
  /** Called once when the stream ends by itself (plugin gone, EOF, error); never after close(). */
  onEnd(reason: string): void;
}

export class PluginClient {
  readonly #client: Client;
  #stream: ClientReadableStream<ListAndWatchResponse> | undefined;
  /** Unary calls in flight; close() cancels them (closing a grpc-js channel lets started calls run on). */
  readonly #calls = new Set<{ cancel(): void }>();
  #closed = false;

  private constructor(
    readonly socketPath: string,
    client: Client,
  ) {
    this.#client = client;
  }

  /** Connects to the plugin's socket; `failed to dial device plugin: ...` (the kubelet's text) on failure. */
  static async dial(socketPath: string, options: PluginClientOptions): Promise<PluginClient> {
    try {
      if (!statSync(socketPath).isSocket()) throw new Error(`${socketPath} is not a unix socket`);
    } catch (err) {
      const why =
        (err as NodeJS.ErrnoException).code === 'ENOENT' ? `no socket at ${socketPath}` : errorMessage(err);
      throw new BerthError('BERTH_DIAL_FAILED', `failed to dial device plugin: ${why}`, { cause: err });
    }
    // A socket file nobody listens on (a crashed plugin's) fails at once, not after the 10 s dial.
    const refused = await probeRefused(socketPath);
    if (refused !== undefined) {
      throw new BerthError('BERTH_DIAL_FAILED', `failed to dial device plugin: ${refused}`);
    }
    const client = new Client(`unix:${socketPath}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.default_authority': 'localhost',
      'grpc.max_receive_message_length': options.maxMessageBytes,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(new Error('aborted'));
        options.signal?.addEventListener('abort', onAbort, { once: true });
        client.waitForReady(Date.now() + options.dialTimeoutMs, (err) => {
          options.signal?.removeEventListener('abort', onAbort);
          if (err) reject(err);
          else resolve();
        });
      });
    } catch (err) {
      client.close();
      throw new BerthError('BERTH_DIAL_FAILED', `failed to dial device plugin: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    return new PluginClient(socketPath, client);
  }

  async getOptions(timeoutMs: number): Promise<DevicePluginOptionsView> {
    const options = await this.#unary(
      devicePluginMethods.getDevicePluginOptions,
      create(EmptySchema),
      timeoutMs,
      'failed to get device plugin options',
    );
    return {
      preStartRequired: options.preStartRequired,
      getPreferredAllocationAvailable: options.getPreferredAllocationAvailable,
    };
  }

  /** Opens the ListAndWatch stream; each message is a full snapshot of the resource's devices. */
  listAndWatch(handlers: StreamHandlers): void {
    if (this.#stream !== undefined) throw new Error('ListAndWatch already started');
    const method = devicePluginMethods.listAndWatch;
    const stream = this.#client.makeServerStreamRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      create(EmptySchema),
      new Metadata(),
      {},
    );
    this.#stream = stream;
    let ended = false;
    const end = (reason: string) => {
      if (ended || this.#closed) return;
      ended = true;
      handlers.onEnd(reason);
    };
    stream.on('data', (response: ListAndWatchResponse) => {
      if (!this.#closed && !ended) handlers.onSnapshot(response);
    });
    stream.on('error', (err: ServiceError) => end(`ListAndWatch failed: ${err.details || err.message}`));
    stream.on('end', () => end('ListAndWatch ended: the plugin closed the stream'));
  }

  async preferredAllocation(available: string[], size: number, timeoutMs: number): Promise<string[]> {
    const response = await this.#unary(
      devicePluginMethods.getPreferredAllocation,
      create(PreferredAllocationRequestSchema, {
        containerRequests: [
          { availableDeviceIDs: available, mustIncludeDeviceIDs: [], allocationSize: size },
        ],
      }),
      timeoutMs,
      'GetPreferredAllocation failed',
    );
    return response.containerResponses[0]?.deviceIDs ?? [];
  }

  async allocate(deviceIds: string[], timeoutMs: number): Promise<AllocationResult> {
    const response: AllocateResponse = await this.#unary(
      devicePluginMethods.allocate,
      create(AllocateRequestSchema, { containerRequests: [{ devicesIds: deviceIds }] }),
      timeoutMs,
      'Allocate failed',
    );
    const container = response.containerResponses[0];
    if (container === undefined) {
      throw new BerthError(
        'BERTH_PLUGIN_CALL_FAILED',
        'no containers return in allocation response container_responses:{}',
      );
    }
    return {
      envs: { ...container.envs },
      mounts: container.mounts.map((m) => ({
        containerPath: m.containerPath,
        hostPath: m.hostPath,
        readOnly: m.readOnly,
      })),
      devices: container.devices.map((d) => ({
        containerPath: d.containerPath,
        hostPath: d.hostPath,
        permissions: d.permissions,
      })),
      annotations: { ...container.annotations },
      cdiDevices: container.cdiDevices.map((c) => c.name),
    };
  }

  async preStartContainer(deviceIds: string[], timeoutMs: number): Promise<void> {
    await this.#unary(
      devicePluginMethods.preStartContainer,
      create(PreStartContainerRequestSchema, { devicesIds: deviceIds }),
      timeoutMs,
      'PreStartContainer failed',
    );
  }

  /** Cancels the stream (without calling onEnd) and closes the channel; idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stream?.cancel();
    for (const call of this.#calls) call.cancel();
    this.#calls.clear();
    this.#client.close();
  }

  #unary<Req, Res>(
    method: MethodDefinition<Req, Res>,
    request: Req,
    timeoutMs: number,
    what: string,
  ): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      if (this.#closed) {
        reject(
          new BerthError(
            'BERTH_PLUGIN_CALL_FAILED',
            `${what}: the client is closed (device plugin ${this.socketPath})`,
          ),
        );
        return;
      }
      const call = this.#client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err: ServiceError | null, response?: Res) => {
          this.#calls.delete(call);
          if (err || response === undefined) {
            const detail = err ? err.details || err.message : 'empty response';
            reject(
              new BerthError(
                'BERTH_PLUGIN_CALL_FAILED',
                `${what}: ${detail} (device plugin ${this.socketPath})`,
                {
                  cause: err,
                  details: err ? { grpcCode: err.code } : {},
                },
              ),
            );
          } else resolve(response);
        },
      );
      this.#calls.add(call);
    });
  }
}

/** The OS reason when a plain connect to the socket is refused; undefined when something accepts. */
function probeRefused(socketPath: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(`connect ${err.code ?? err.message} ${socketPath}`);
    });
  });
}
