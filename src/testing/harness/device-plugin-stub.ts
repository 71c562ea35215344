/**
 * A device plugin for tests (the kubelet's device plugin stub, in berth's
 * stack): serves v1beta1.DevicePlugin on a real unix socket, pushes device
 * snapshots on every open ListAndWatch stream, records the calls it gets, and
 * registers through the legacy kubelet.sock when asked.
 */
import { unlinkSync } from 'node:fs';
import { create } from '@bufbuild/protobuf';
import {
  Client,
  credentials,
  Metadata,
  Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceError,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import {
  AllocateResponseSchema,
  DevicePluginOptionsSchema,
  devicePluginService,
  deviceRegistrationService,
  type ListAndWatchResponse,
  ListAndWatchResponseSchema,
  PreferredAllocationResponseSchema,
  PreStartContainerResponseSchema,
  RegisterRequestSchema,
} from '../../handlers/device-plugin/device-plugin-wire.js';
import { listenUnixGrpc, type UnixGrpcListener } from '../../unix-grpc/index.js';

export interface StubDevice {
  id: string;
  health?: 'Healthy' | 'Unhealthy' | string;
  numaNodes?: number[];
}

export interface DevicePluginStubOptions {
  socketPath: string;
  devices?: StubDevice[];
  preStartRequired?: boolean;
  getPreferredAllocationAvailable?: boolean;
  /** What GetPreferredAllocation answers; default: the last `size` available devices. */
  preferred?: (available: string[], size: number) => string[];
  /** Fail Allocate with this message. */
  allocateError?: string;
  /** Answer GetDevicePluginOptions only when this resolves (to hold a registration mid-way). */
  optionsGate?: Promise<void>;
}

export class DevicePluginStub {
  readonly socketPath: string;
  readonly allocateCalls: string[][] = [];
  readonly preStartCalls: string[][] = [];
  readonly preferredCalls: Array<{ available: string[]; size: number }> = [];
  optionsCalls = 0;
  listAndWatchCalls = 0;
  readonly #streams = new Set<ServerWritableStream<unknown, ListAndWatchResponse>>();
  readonly #server = new Server();
  #devices: StubDevice[];
  #closed: Promise<void> | undefined;
  #listener: UnixGrpcListener | undefined;

  constructor(readonly options: DevicePluginStubOptions) {
    this.socketPath = options.socketPath;
    this.#devices = options.devices ?? [];
    this.#server.addService(devicePluginService, {
      getDevicePluginOptions: (
        _call: ServerUnaryCall<unknown, unknown>,
        callback: sendUnaryData<unknown>,
      ) => {
        this.optionsCalls++;
        void (options.optionsGate ?? Promise.resolve()).then(() =>
          callback(
            null,
            create(DevicePluginOptionsSchema, {
              preStartRequired: options.preStartRequired ?? false,
              getPreferredAllocationAvailable: options.getPreferredAllocationAvailable ?? false,
            }),
          ),
        );
      },
      listAndWatch: (call: ServerWritableStream<unknown, ListAndWatchResponse>) => {
        this.listAndWatchCalls++;
        this.#streams.add(call);
        call.on('cancelled', () => this.#streams.delete(call));
        call.on('close', () => this.#streams.delete(call));
        call.write(this.#snapshot());
      },
      getPreferredAllocation: (
        call: ServerUnaryCall<
          { containerRequests: Array<{ availableDeviceIDs: string[]; allocationSize: number }> },
          unknown
        >,
        callback: sendUnaryData<unknown>,
      ) => {
        const request = call.request.containerRequests[0];
        const available = [...(request?.availableDeviceIDs ?? [])];
        const size = request?.allocationSize ?? 0;
        this.preferredCalls.push({ available, size });
        const chosen = options.preferred ? options.preferred(available, size) : available.slice(-size);
        callback(
          null,
          create(PreferredAllocationResponseSchema, { containerResponses: [{ deviceIDs: chosen }] }),
        );
      },
      allocate: (
        call: ServerUnaryCall<{ containerRequests: Array<{ devicesIds: string[] }> }, unknown>,
        callback: sendUnaryData<unknown>,
      ) => {
        const ids = [...(call.request.containerRequests[0]?.devicesIds ?? [])];
        this.allocateCalls.push(ids);
        if (options.allocateError !== undefined) {
          callback({ code: status.INTERNAL, details: options.allocateError } as ServiceError);
          return;
        }
        callback(
          null,
          create(AllocateResponseSchema, {
            containerResponses: [
              {
                envs: { STUB_DEVICES: ids.join(',') },
                mounts: [{ containerPath: '/dev/stub', hostPath: '/var/stub', readOnly: true }],
                devices: ids.map((id) => ({
                  containerPath: `/dev/${id}`,
                  hostPath: `/dev/${id}`,
                  permissions: 'rw',
                })),
                annotations: { 'stub.example.com/devices': ids.join(',') },
                cdiDevices: ids.map((id) => ({ name: `example.com/stub=${id}` })),
              },
            ],
          }),
        );
      },
      preStartContainer: (
        call: ServerUnaryCall<{ devicesIds: string[] }, unknown>,
        callback: sendUnaryData<unknown>,
      ) => {
        this.preStartCalls.push([...call.request.devicesIds]);
        callback(null, create(PreStartContainerResponseSchema));
      },
    });
  }

  /** ListAndWatch streams currently open. */
  get openStreams(): number {
    return this.#streams.size;
  }

  async start(): Promise<this> {
    this.#listener = await listenUnixGrpc(this.#server, this.socketPath);
    return this;
  }

  /** Replaces the device list and sends it on every open stream. */
  setDevices(devices: StubDevice[]): void {
    this.#devices = devices;
    const snapshot = this.#snapshot();
    for (const stream of this.#streams) stream.write(snapshot);
  }

  /** Ends every open ListAndWatch stream (the plugin stops watching, the process lives on). */
  endStreams(): void {
    for (const stream of this.#streams) stream.end();
    this.#streams.clear();
  }

  /** Calls v1beta1.Registration/Register on `kubeletSocket`; rejects with the server's error text. */
  register(
    kubeletSocket: string,
    endpoint: string,
    resourceName: string,
    version = 'v1beta1',
  ): Promise<void> {
    const client = new Client(`unix:${kubeletSocket}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
    });
    const method = deviceRegistrationService.register;
    return new Promise<void>((resolve, reject) => {
      client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        create(RegisterRequestSchema, { version, endpoint, resourceName }),
        new Metadata(),
        { deadline: Date.now() + 30_000 },
        (err: ServiceError | null) => {
          client.close();
          if (err) reject(new Error(err.details));
          else resolve();
        },
      );
    });
  }

  /** Stops serving at once (streams end, as when the process dies) and removes the socket. */
  stop(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      void this.#listener?.close();
      this.#server.forceShutdown();
      try {
        unlinkSync(this.socketPath);
      } catch {
        // Already gone.
      }
      resolve();
    });
    return this.#closed;
  }

  #snapshot(): ListAndWatchResponse {
    return create(ListAndWatchResponseSchema, {
      devices: this.#devices.map((d) => ({
        ID: d.id,
        health: d.health ?? 'Healthy',
        ...(d.numaNodes === undefined
          ? {}
          : { topology: { nodes: d.numaNodes.map((n) => ({ ID: BigInt(n) })) } }),
      })),
    });
  }
}

export async function startDevicePluginStub(options: DevicePluginStubOptions): Promise<DevicePluginStub> {
  return new DevicePluginStub(options).start();
}
