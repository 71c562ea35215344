/**
 * berth's device manager (the kubelet's cm/devicemanager, without pods): one
 * connection per extended resource, fed by either way of registering; a live
 * inventory from each resource's ListAndWatch stream; durable allocations.
 *
 * The kubernetes#121994 race (an old client's stream ending tears down the
 * client that replaced it) cannot happen: every stream callback carries the
 * client it belongs to and acts only while that client is the resource's
 * current one, and a replaced client is closed without reporting an end.
 */
import { isAbsolute } from 'node:path';
import {
  AbortScope,
  BerthError,
  type Clock,
  type ClockTimer,
  type DevicesChangedReason,
  LifecycleComponent,
  type Logger,
  loadOnce,
} from '../../common/index.js';
import { probeConnect } from '../../registration/registrar.js';
import { SerialQueues } from '../serial-queues.js';
import { checkAllocationRequest, pickPreferred } from './allocation-request.js';
import type { StoredAllocation } from './allocation-store.js';
import { DeviceAllocations } from './device-allocations.js';
import {
  type DevicePluginManagerOptions,
  MAX_DEVICE_ID_LENGTH,
  type ResolvedDevicePluginManagerOptions,
  resolveDevicePluginManagerOptions,
} from './device-plugin-options.js';
import type { ListAndWatchResponse } from './device-plugin-wire.js';
import { LegacyRegistrationServer } from './legacy-registration-server.js';
import type { PluginClient } from './plugin-client.js';
import type {
  AllocationRequest,
  AllocationView,
  DevicePluginOptionsView,
  DeviceView,
  RegistrationPath,
  ResourceState,
  ResourceView,
} from './types.js';

/** The plugin client (grpc-js, the v1beta1 messages), loaded when the first plugin connects. */
const deviceGrpc = loadOnce(() => import('./device-plugin-grpc.js'));

const HEALTHY = 'Healthy';
const UNHEALTHY = 'Unhealthy';
const MAX_CHANGED_LISTED = 100;
/** How long the check "is a disconnected legacy plugin's endpoint gone?" waits for a connect. */
const ENDPOINT_PROBE_MS = 1_000;
/**
 * When that check runs after the stream ends (ms after the previous one): a
 * plugin that shuts down often ends its streams before it closes its
 * listener, so an endpoint that still answers at once is asked again.
 */
const ENDPOINT_RECHECK_MS = [250, 1_000, 3_000] as const;
/** A DNS subdomain prefix (253), "/", and a name (63): the longest extended resource name. */
const MAX_RESOURCE_NAME_LENGTH = 317;

interface Device {
  id: string;
  /** What the plugin last said; set to Unhealthy when its stream ends (the kubelet's rule). */
  reportedHealth: string;
  numaNodes: number[];
}

interface Resource {
  name: string;
  state: ResourceState;
  via: RegistrationPath | null;
  endpoint: string | null;
  /** For plugins-dir registrations: the registration socket, which names the instance. */
  registrationSocket: string | null;
  client: PluginClient | undefined;
  options: DevicePluginOptionsView | null;
  devices: Map<string, Device>;
  connectedAt: number | null;
  disconnectedAt: number | null;
  removeAt: number | null;
  removeTimer: ClockTimer | undefined;
  lastError: string | null;
}

export interface ConnectOptions {
  via: RegistrationPath;
  registrationSocket?: string;
}

export class DevicePluginManager extends LifecycleComponent implements AsyncDisposable {
  readonly #options: ResolvedDevicePluginManagerOptions;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #resources = new Map<string, Resource>();
  /** Who holds which devices, durably (device-allocations.ts). */
  readonly #allocations = new DeviceAllocations();
  readonly #queues = new SerialQueues();
  /** Clients dialled but not yet installed; stop closes them so a slow plugin cannot hold it up. */
  readonly #connecting = new Set<PluginClient>();
  /** A signal per dial, aborted on stop, without a listener per dial on the lifecycle's signal. */
  readonly #dials: AbortScope;
  #legacy: LegacyRegistrationServer | undefined;
  /** resource -> the endpoint recorded in legacyRecord for its kubelet.sock registration. */
  readonly #recorded = new Map<string, string>();
  /** Pending re-checks of disconnected legacy endpoints (#checkGone), cleared on stop. */
  readonly #rechecks = new Set<ClockTimer>();

  constructor(options: DevicePluginManagerOptions) {
    super();
    this.#options = resolveDevicePluginManagerOptions(options);
    this.#clock = this.#options.clock;
    this.#logger = this.#options.logger;
    this.#dials = new AbortScope(this.lifecycleSignal);
  }

  protected override onStart(): Promise<void> | void {
    return this.#start();
  }

  protected override onStop(): Promise<void> | void {
    return this.#stop();
  }

  /** The legacy registration socket, when one is served. */
  get registrationSocketPath(): string | undefined {
    return this.#legacy?.socketPath;
  }

  async #start(): Promise<void> {
    const { allocations, problems } = this.#allocations.open(this.#options.databasePath);
    for (const problem of problems) {
      this.#logger.error({ path: this.#options.databasePath }, problem);
      this.#options.onEvent?.({
        type: 'storage-error',
        at: this.#clock.now(),
        error: { code: 'BERTH_STORAGE_CORRUPT', message: problem },
        path: this.#options.databasePath,
      });
    }
    for (const allocation of allocations) {
      // The kubelet's checkpoint restore: a known resource comes back stopped, empty, and is
      // removed after the grace period unless its plugin registers again.
      if (!this.#resources.has(allocation.resource)) {
        const resource = this.#newResource(allocation.resource);
        this.#resources.set(resource.name, resource);
        this.#markStopped(resource);
      }
    }
    if (allocations.length > 0)
      this.#logger.info({ allocations: allocations.length }, 'restored device allocations');
    if (this.#options.socketDir !== undefined) {
      const legacy = new LegacyRegistrationServer(
        this.#options.socketDir,
        (resource, endpoint) => this.#connectLegacy(resource, endpoint),
        this.#logger,
      );
      this.#legacy = legacy;
      await legacy.start();
    }
  }

  async #stop(): Promise<void> {
    for (const timer of this.#rechecks) this.#clock.clearTimeout(timer);
    this.#rechecks.clear();
    for (const client of this.#connecting) client.close();
    await this.#legacy?.stop();
    for (const resource of this.#resources.values()) {
      resource.client?.close();
      resource.client = undefined;
      if (resource.removeTimer !== undefined) this.#clock.clearTimeout(resource.removeTimer);
    }
    // Let calls already queued finish (they see the stopped state) before the store closes.
    await Promise.all([...this.#resources.keys()].map((name) => this.#queues.run(name, () => undefined)));
    this.#allocations.close();
  }

  #running(): void {
    const state = this.state;
    if (state !== 'running' && state !== 'starting') {
      throw new BerthError('BERTH_SHUT_DOWN', `the device plugin manager is ${state}`);
    }
  }

  /**
   * Connects a plugin that registered for `resourceName`: dial, GetDevicePluginOptions, then the
   * ListAndWatch stream. Replaces any current client of the resource (closing it first-class, so its
   * stream's end is not taken for the new one's). A failure leaves the current client untouched.
   */
  connect(resourceName: string, endpoint: string, how: ConnectOptions): Promise<void> {
    return this.#queues.run(resourceName, async () => {
      this.#running();
      if (
        typeof resourceName !== 'string' ||
        resourceName === '' ||
        resourceName.length > MAX_RESOURCE_NAME_LENGTH
      ) {
        throw new BerthError(
          'BERTH_INVALID_ARGUMENT',
          `device plugin resource name must be 1-${MAX_RESOURCE_NAME_LENGTH} characters, got ${JSON.stringify(String(resourceName).slice(0, 80))}`,
        );
      }
      if (!isAbsolute(endpoint)) {
        throw new BerthError(
          'BERTH_REGISTER_FAILED',
          `bad socketPath, must be an absolute path: ${endpoint}`,
        );
      }
      const { PluginClient } = await deviceGrpc();
      const client = await this.#dials.run((signal) =>
        PluginClient.dial(endpoint, {
          dialTimeoutMs: this.#options.dialTimeoutMs,
          maxMessageBytes: this.#options.maxMessageBytes,
          signal,
        }),
      );
      let options: DevicePluginOptionsView;
      this.#connecting.add(client);
      try {
        this.#running();
        options = await client.getOptions(this.#options.optionsTimeoutMs);
        this.#running();
      } catch (err) {
        client.close();
        throw err;
      } finally {
        this.#connecting.delete(client);
      }
      let resource = this.#resources.get(resourceName);
      if (resource === undefined) {
        resource = this.#newResource(resourceName);
        this.#resources.set(resourceName, resource);
      }
      const previous = resource.client;
      resource.client = client;
      resource.state = 'connected';
      resource.via = how.via;
      resource.endpoint = endpoint;
      resource.registrationSocket = how.registrationSocket ?? null;
      resource.options = options;
      resource.connectedAt = this.#clock.now();
      resource.disconnectedAt = null;
      resource.removeAt = null;
      resource.lastError = null;
      if (resource.removeTimer !== undefined) this.#clock.clearTimeout(resource.removeTimer);
      resource.removeTimer = undefined;
      previous?.close();
      const recorded = this.#recorded.get(resourceName);
      if (recorded !== undefined && how.via !== 'kubelet-socket') this.#forgetLegacy(resourceName, recorded);
      const current = resource;
      client.listAndWatch({
        onSnapshot: (response) => this.#onSnapshot(current, client, response),
        onEnd: (reason) => this.#onStreamEnd(current, client, reason),
      });
      this.#logger.info(
        { resource: resourceName, endpoint, via: how.via, ...options },
        'device plugin connected',
      );
      this.#emit(resource, 'connected', []);
    });
  }

  /**
   * A kubelet.sock registration: connect, then record it (the registry
   * instance) before the plugin's Register call is answered. A failed record
   * disconnects the plugin again, so what the plugin hears is what berth has.
   */
  async #connectLegacy(resourceName: string, endpoint: string): Promise<void> {
    await this.connect(resourceName, endpoint, { via: 'kubelet-socket' });
    const record = this.#options.legacyRecord;
    if (record === undefined) return;
    try {
      await record.registered(resourceName, endpoint);
    } catch (err) {
      await this.#queues.run(resourceName, () => {
        const resource = this.#resources.get(resourceName);
        const client = resource?.client;
        if (resource?.via === 'kubelet-socket' && resource.endpoint === endpoint && client !== undefined) {
          this.#onStreamEnd(resource, client, 'its registration could not be recorded');
        }
      });
      throw err;
    }
    const previous = this.#recorded.get(resourceName);
    this.#recorded.set(resourceName, endpoint);
    if (previous !== undefined && previous !== endpoint) this.#forgetLegacy(resourceName, previous);
  }

  /** Removes a kubelet.sock registration's record (fire and forget: callers are stream callbacks). */
  #forgetLegacy(resourceName: string, endpoint: string): void {
    if (this.#recorded.get(resourceName) === endpoint) this.#recorded.delete(resourceName);
    this.#options.legacyRecord?.gone(resourceName, endpoint).catch((err: unknown) => {
      this.#logger.warn(
        { err, resource: resourceName, endpoint },
        'could not remove a legacy device plugin record',
      );
    });
  }

  /**
   * A plugins-dir deregistration of one instance (its registration socket). Only the client that
   * instance registered is disconnected; a newer registration of the resource is left alone.
   */
  disconnect(resourceName: string, registrationSocket: string): Promise<boolean> {
    return this.#queues.run(resourceName, () => {
      const resource = this.#resources.get(resourceName);
      const client = resource?.client;
      if (resource === undefined || client === undefined) return false;
      if (resource.via !== 'plugins-dir' || resource.registrationSocket !== registrationSocket) return false;
      this.#onStreamEnd(resource, client, 'the plugin was deregistered');
      return true;
    });
  }

  #onSnapshot(resource: Resource, client: PluginClient, response: ListAndWatchResponse): void {
    if (resource.client !== client) return;
    const problem = this.#checkSnapshot(response);
    if (problem !== undefined) {
      resource.lastError = problem;
      this.#logger.warn({ resource: resource.name, endpoint: resource.endpoint }, problem);
      return;
    }
    resource.lastError = null;
    const next = new Map<string, Device>();
    for (const device of response.devices) {
      next.set(device.ID, {
        id: device.ID,
        reportedHealth: device.health,
        numaNodes: (device.topology?.nodes ?? []).map((n) => Number(n.ID)),
      });
    }
    const changed: string[] = [];
    for (const [id, device] of next) {
      const before = resource.devices.get(id);
      if (
        before === undefined ||
        (before.reportedHealth === HEALTHY) !== (device.reportedHealth === HEALTHY) ||
        before.numaNodes.join(',') !== device.numaNodes.join(',')
      ) {
        changed.push(id);
      }
    }
    for (const id of resource.devices.keys()) if (!next.has(id)) changed.push(id);
    resource.devices = next;
    // Plugins often resend an unchanged list (on every health check); that is not news.
    if (changed.length > 0) this.#emit(resource, 'snapshot', changed);
    else this.#logger.debug({ resource: resource.name, devices: next.size }, 'device snapshot unchanged');
  }

  #checkSnapshot(response: ListAndWatchResponse): string | undefined {
    const max = this.#options.maxDevicesPerResource;
    if (response.devices.length > max) {
      return `ListAndWatch sent ${response.devices.length} devices; at most ${max} are accepted per resource (snapshot ignored)`;
    }
    const seen = new Set<string>();
    for (const device of response.devices) {
      if (device.ID === '' || device.ID.length > MAX_DEVICE_ID_LENGTH) {
        return `ListAndWatch sent a device ID ${JSON.stringify(device.ID.slice(0, 80))} that is empty or longer than ${MAX_DEVICE_ID_LENGTH} characters (snapshot ignored)`;
      }
      if (seen.has(device.ID))
        return `ListAndWatch sent device ${JSON.stringify(device.ID)} twice (snapshot ignored)`;
      seen.add(device.ID);
    }
    return undefined;
  }

  #onStreamEnd(resource: Resource, client: PluginClient, reason: string): void {
    // The fix of kubernetes#121994: only the current client may disconnect its resource.
    if (resource.client !== client) return;
    resource.client = undefined;
    client.close();
    this.#logger.warn(
      { resource: resource.name, endpoint: resource.endpoint },
      `device plugin disconnected: ${reason}`,
    );
    const changed = [...resource.devices.values()]
      .filter((d) => d.reportedHealth === HEALTHY)
      .map((d) => d.id);
    this.#markStopped(resource);
    this.#emit(resource, 'disconnected', changed);
    // A legacy plugin whose endpoint is gone (no file, or nobody listens) leaves the registry
    // now; one whose endpoint still answers may come back, and leaves when the grace period ends.
    const recorded = this.#recorded.get(resource.name);
    if (recorded !== undefined) this.#checkGone(resource, recorded, 0);
  }

  /** Forgets a disconnected legacy record whose endpoint is gone; asks again (ENDPOINT_RECHECK_MS) while it answers. */
  #checkGone(resource: Resource, endpoint: string, rechecks: number): void {
    void probeConnect(endpoint, ENDPOINT_PROBE_MS).then((err) => {
      // Connected again, re-registered elsewhere, or already forgotten: nothing to decide.
      if (this.#recorded.get(resource.name) !== endpoint || resource.client !== undefined) return;
      if (err?.code === 'ENOENT' || err?.code === 'ECONNREFUSED') {
        this.#forgetLegacy(resource.name, endpoint);
        return;
      }
      const delay = ENDPOINT_RECHECK_MS[rechecks];
      if (delay === undefined || (this.state !== 'running' && this.state !== 'starting')) return;
      const timer = this.#clock.setTimeout(() => {
        this.#rechecks.delete(timer);
        this.#checkGone(resource, endpoint, rechecks + 1);
      }, delay);
      this.#rechecks.add(timer);
    });
  }

  /** Devices become unhealthy; the resource is removed after the grace period unless the plugin returns. */
  #markStopped(resource: Resource): void {
    for (const device of resource.devices.values()) device.reportedHealth = UNHEALTHY;
    const now = this.#clock.now();
    resource.state = 'disconnected';
    resource.disconnectedAt = now;
    resource.removeAt = now + this.#options.gracePeriodMs;
    if (resource.removeTimer !== undefined) this.#clock.clearTimeout(resource.removeTimer);
    resource.removeTimer = this.#clock.setTimeout(
      () => this.#removeExpired(resource),
      this.#options.gracePeriodMs,
    );
  }

  #removeExpired(resource: Resource): void {
    resource.removeTimer = undefined;
    if (this.#resources.get(resource.name) !== resource || resource.client !== undefined) return;
    const changed = [...resource.devices.keys()];
    this.#resources.delete(resource.name);
    resource.devices = new Map();
    resource.state = 'absent';
    this.#logger.info({ resource: resource.name }, 'device plugin resource removed after its grace period');
    this.#emit(resource, 'removed', changed);
    const recorded = this.#recorded.get(resource.name);
    if (recorded !== undefined) this.#forgetLegacy(resource.name, recorded);
  }

  #emit(resource: Resource, reason: DevicesChangedReason, changed: string[]): void {
    const { healthy, unhealthy } = this.#counts(resource);
    this.#options.onEvent?.({
      type: 'devices-changed',
      at: this.#clock.now(),
      resource: resource.name,
      reason,
      ...(resource.endpoint === null ? {} : { endpoint: resource.endpoint }),
      healthy,
      unhealthy,
      changed: changed.sort().slice(0, MAX_CHANGED_LISTED),
    });
  }

  #isHealthy(resource: Resource, device: Device): boolean {
    return resource.client !== undefined && device.reportedHealth === HEALTHY;
  }

  #counts(resource: Resource): { healthy: number; unhealthy: number } {
    let healthy = 0;
    for (const device of resource.devices.values()) if (this.#isHealthy(resource, device)) healthy++;
    return { healthy, unhealthy: resource.devices.size - healthy };
  }

  #newResource(name: string): Resource {
    return {
      name,
      state: 'disconnected',
      via: null,
      endpoint: null,
      registrationSocket: null,
      client: undefined,
      options: null,
      devices: new Map(),
      connectedAt: null,
      disconnectedAt: null,
      removeAt: null,
      removeTimer: undefined,
      lastError: null,
    };
  }

  /**
   * Picks healthy free devices (the plugin's preference first when it offers one), calls Allocate
   * and, when the plugin asks for it, PreStartContainer; then records the allocation durably.
   * Allocations of one resource run one at a time.
   */
  async allocate(resourceName: string, request: AllocationRequest): Promise<AllocationView> {
    this.#refuseWhenObserving(`allocate ${resourceName}`);
    const checked = checkAllocationRequest(resourceName, request, this.#options.maxAllocationCount);
    return this.#queues.run(resourceName, async () => {
      this.#running();
      const resource = this.#resources.get(resourceName);
      if (resource === undefined || (resource.client === undefined && resource.devices.size === 0)) {
        throw new BerthError(
          'BERTH_DEVICES_UNAVAILABLE',
          `cannot allocate unregistered device ${resourceName}`,
        );
      }
      const held = this.#allocations.of(resourceName);
      const existing = held.get(checked.workload);
      if (existing !== undefined) {
        throw new BerthError(
          'BERTH_ALLOCATION_EXISTS',
          `workload ${checked.workload} already holds ${resourceName} devices ${existing.deviceIds.join(',')}; release it first`,
        );
      }
      const client = resource.client;
      const healthy = [...resource.devices.values()]
        .filter((d) => this.#isHealthy(resource, d))
        .map((d) => d.id);
      if (client === undefined || healthy.length === 0) {
        throw new BerthError(
          'BERTH_DEVICES_UNAVAILABLE',
          `no healthy devices present; cannot allocate unhealthy devices ${resourceName}`,
        );
      }
      const taken = new Map<string, string>();
      for (const allocation of held.values())
        for (const id of allocation.deviceIds) taken.set(id, allocation.workload);
      const free = healthy.filter((id) => !taken.has(id)).sort();
      let chosen: string[];
      if (checked.deviceIds !== undefined) {
        for (const id of checked.deviceIds) {
          const device = resource.devices.get(id);
          if (device === undefined) {
            throw new BerthError(
              'BERTH_DEVICES_UNAVAILABLE',
              `cannot allocate unregistered device ${resourceName} ${id}`,
            );
          }
          if (!this.#isHealthy(resource, device)) {
            throw new BerthError(
              'BERTH_DEVICES_UNAVAILABLE',
              `cannot allocate unhealthy device ${resourceName} ${id}`,
            );
          }
          const holder = taken.get(id);
          if (holder !== undefined) {
            throw new BerthError(
              'BERTH_DEVICES_UNAVAILABLE',
              `device ${resourceName} ${id} is allocated to workload ${holder}`,
            );
          }
        }
        chosen = [...checked.deviceIds];
      } else {
        const count = checked.count;
        if (count > free.length) {
          throw new BerthError(
            'BERTH_DEVICES_UNAVAILABLE',
            `requested number of devices unavailable for ${resourceName}. Requested: ${count}, Available: ${free.length}`,
          );
        }
        chosen = free.slice(0, count);
        if (resource.options?.getPreferredAllocationAvailable) {
          const preferred = await client.preferredAllocation(free, count, this.#options.allocateTimeoutMs);
          chosen = pickPreferred(preferred, free, count);
        }
      }
      const result = await client.allocate(chosen, this.#options.allocateTimeoutMs);
      if (resource.options?.preStartRequired) {
        await client.preStartContainer(chosen, this.#options.preStartTimeoutMs);
      }
      this.#running();
      const allocation: StoredAllocation = {
        resource: resourceName,
        workload: checked.workload,
        deviceIds: chosen,
        result,
        allocatedAt: this.#clock.now(),
      };
      this.#allocations.add(allocation);
      this.#logger.info(
        { resource: resourceName, workload: checked.workload, devices: chosen },
        'devices allocated',
      );
      return this.#allocationView(allocation);
    });
  }

  /** Releases a workload's devices (the device plugin API has no call for it: only berth's record goes). */
  release(resourceName: string, workload: string): Promise<AllocationView> {
    try {
      this.#refuseWhenObserving(`release ${resourceName} for ${workload}`);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#queues.run(resourceName, () => {
      this.#running();
      const allocation = this.#allocations.remove(resourceName, workload);
      if (allocation === undefined) {
        throw new BerthError(
          'BERTH_ALLOCATION_NOT_FOUND',
          `workload ${workload} holds no allocation of ${resourceName}; list allocations with GET /v1/devices`,
        );
      }
      this.#logger.info({ resource: resourceName, workload }, 'devices released');
      return this.#allocationView(allocation);
    });
  }

  /** An observer never takes devices: the kubelet owns the plugins and their allocations. */
  #refuseWhenObserving(what: string): void {
    if (this.#options.observe !== true) return;
    throw new BerthError(
      'BERTH_OBSERVE_ONLY',
      `cannot ${what}: berth observes these device plugins (another registrar owns them) and takes no allocation`,
    );
  }

  #allocationView(allocation: StoredAllocation): AllocationView {
    const resource = this.#resources.get(allocation.resource);
    const unhealthyDeviceIds = allocation.deviceIds.filter((id) => {
      const device = resource?.devices.get(id);
      return resource === undefined || device === undefined || !this.#isHealthy(resource, device);
    });
    return {
      resource: allocation.resource,
      workload: allocation.workload,
      deviceIds: [...allocation.deviceIds],
      allocatedAt: allocation.allocatedAt,
      unhealthyDeviceIds,
      envs: { ...allocation.result.envs },
      mounts: allocation.result.mounts.map((m) => ({ ...m })),
      devices: allocation.result.devices.map((d) => ({ ...d })),
      annotations: { ...allocation.result.annotations },
      cdiDevices: [...allocation.result.cdiDevices],
    };
  }

  /** Every resource (and every resource that only has allocations left), by name. */
  list(): ResourceView[] {
    const names = new Set([...this.#resources.keys(), ...this.#allocations.resources()]);
    return [...names].sort().map((name) => this.#view(name));
  }

  get(resourceName: string): ResourceView | undefined {
    if (!this.#resources.has(resourceName) && !this.#allocations.has(resourceName)) return undefined;
    return this.#view(resourceName);
  }

  #view(name: string): ResourceView {
    const resource = this.#resources.get(name);
    const allocations = [...this.#allocations.of(name).values()]
      .sort((a, b) => a.workload.localeCompare(b.workload))
      .map((a) => this.#allocationView(a));
    const holder = new Map<string, string>();
    for (const a of allocations) for (const id of a.deviceIds) holder.set(id, a.workload);
    if (resource === undefined) {
      return {
        resource: name,
        state: 'absent',
        via: null,
        endpoint: null,
        options: null,
        healthy: 0,
        unhealthy: 0,
        devices: [],
        topology: [],
        connectedAt: null,
        disconnectedAt: null,
        removeAt: null,
        lastError: null,
        allocations,
      };
    }
    const devices: DeviceView[] = [...resource.devices.values()]
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((d) => ({
        id: d.id,
        health: this.#isHealthy(resource, d) ? HEALTHY : UNHEALTHY,
        numaNodes: [...d.numaNodes],
        allocatedTo: holder.get(d.id) ?? null,
      }));
    const byNode = new Map<number | null, string[]>();
    for (const d of devices) {
      const nodes = d.numaNodes.length === 0 ? [null] : d.numaNodes;
      for (const node of nodes) {
        const list = byNode.get(node) ?? [];
        list.push(d.id);
        byNode.set(node, list);
      }
    }
    const topology = [...byNode.entries()]
      .sort(([a], [b]) => (a ?? Number.MAX_SAFE_INTEGER) - (b ?? Number.MAX_SAFE_INTEGER))
      .map(([numaNode, deviceIds]) => ({ numaNode, deviceIds }));
    const { healthy, unhealthy } = this.#counts(resource);
    return {
      resource: name,
      state: resource.state,
      via: resource.via,
      endpoint: resource.endpoint,
      options: resource.options ? { ...resource.options } : null,
      healthy,
      unhealthy,
      devices,
      topology,
      connectedAt: resource.connectedAt,
      disconnectedAt: resource.disconnectedAt,
      removeAt: resource.removeAt,
      lastError: resource.lastError,
      allocations,
      ...(this.#options.observe === true ? { observed: true as const } : {}),
    };
  }
}

export function createDevicePluginManager(options: DevicePluginManagerOptions): DevicePluginManager {
  return new DevicePluginManager(options);
}
