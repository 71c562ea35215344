/**
 * The DRAPlugin handler: the kubelet 1.34 DRA plugin manager without
 * ResourceSlices (pkg/kubelet/cm/dra/plugin). Several instances per driver,
 * keyed by endpoint (seamless upgrades); each is connected right after it
 * registers and its connection watched. A driver is usable while any
 * instance is connected; calls go to the newest connected instance (else the
 * newest). When a driver stays unusable for the wipe delay, berth emits
 * `driver-unusable` (the moment the kubelet wipes the driver's slices); a
 * registration or reconnect inside the delay cancels it.
 */
import {
  BerthError,
  type ClockTimer,
  LifecycleComponent,
  type Logger,
  loadOnce,
} from '../../common/index.js';
import { grpcErrorText } from '../grpc-error-text.js';
import type {
  BuiltinHandler,
  HandlerServices,
  PluginCallContext,
  PluginHandler,
  RegisterContext,
} from '../types.js';
import { type ClaimResult, type ClaimsResult, checkClaims, missingText } from './dra-claims.js';
import type { ConnectionState, DraConnection } from './dra-connection.js';
import { type DraHandlerOptions, draOptions } from './dra-options.js';
import { chooseDraService, type DraService } from './dra-services.js';
import type { ClaimRef } from './dra-wire.js';

/** The gRPC side (grpc-js, the dra v1 and v1beta1 messages), loaded when the first driver registers. */
const draGrpc = loadOnce(() => import('./dra-grpc.js'));

export const DRAPlugin = 'DRAPlugin';

interface Instance {
  name: string;
  endpoint: string;
  socketPath: string;
  service: DraService;
  connection: DraConnection;
  registeredAt: number;
  /** The registration's pluginClientTimeout, else the configured call timeout (kubelet: 45 s). */
  callTimeoutMs: number;
  /** Order of registration; the newest has the highest. */
  seq: number;
}

interface DriverState {
  instances: Instance[];
  /** When the driver last stopped being usable; null while usable. */
  unusableSince: number | null;
  /** Pending `driver-unusable`. */
  timer: ClockTimer | undefined;
  /** `driver-unusable` was emitted for the current unusable period. */
  reported: boolean;
  /** Some instance finished registering (a driver that never did is not reported unusable). */
  registered: boolean;
}

export interface DraInstanceView {
  endpoint: string;
  socketPath: string;
  service: DraService;
  state: ConnectionState;
  connected: boolean;
  registeredAt: number;
}

export interface DraDriverView {
  name: string;
  usable: boolean;
  /** The instance calls go to now. */
  chosen: { endpoint: string; service: DraService } | null;
  unusableSince: number | null;
  /** Newest first. */
  instances: DraInstanceView[];
  /** Present (true) in observe mode: berth only watches this driver; the kubelet prepares its claims. */
  observed?: true;
}

export class DraHandler extends LifecycleComponent implements BuiltinHandler {
  readonly type = DRAPlugin;
  readonly #services: HandlerServices;
  readonly #delegate: PluginHandler | undefined;
  readonly #options: DraHandlerOptions;
  readonly #logger: Logger;
  readonly #drivers = new Map<string, DriverState>();
  #seq = 0;
  #stopped = false;

  constructor(services: HandlerServices, delegate?: PluginHandler) {
    super();
    this.#services = services;
    this.#delegate = delegate;
    this.#options = draOptions(services.options);
    this.#logger = services.logger;
  }

  protected override onStop(): Promise<void> | void {
    return this.#closeAll();
  }

  get options(): Readonly<DraHandlerOptions> {
    return this.#options;
  }

  async validatePlugin(name: string, endpoint: string, versions: string[], context: PluginCallContext) {
    const choice = chooseDraService(name, endpoint, versions);
    if (!choice.ok) throw new BerthError('BERTH_VALIDATION_FAILED', choice.error);
    await this.#delegate?.validatePlugin(name, endpoint, versions, context);
  }

  async registerPlugin(name: string, endpoint: string, versions: string[], context: RegisterContext) {
    // Loaded before the checks, so the checks and the instance's entry below stay one synchronous step.
    const { DraConnection } = await draGrpc();
    if (this.#stopped) throw new BerthError('BERTH_SHUT_DOWN', 'the DRA handler is stopped');
    const choice = chooseDraService(name, endpoint, versions);
    if (!choice.ok) throw new BerthError('BERTH_REGISTER_FAILED', choice.error);
    const driver = this.#driver(name);
    // One instance cannot hijack the endpoint of another.
    if (driver.instances.some((i) => i.endpoint === endpoint)) {
      throw new BerthError(
        'BERTH_REGISTER_FAILED',
        `endpoint ${endpoint} already registered for plugin ${name}`,
      );
    }
    const instance: Instance = {
      name,
      endpoint,
      socketPath: context.socketPath,
      service: choice.service,
      registeredAt: this.#services.clock.now(),
      callTimeoutMs: context.pluginClientTimeoutMs ?? this.#options.callTimeoutMs,
      seq: ++this.#seq,
      connection: new DraConnection(endpoint, (state) => this.#connectionChanged(name, endpoint, state)),
    };
    driver.instances.push(instance);
    // A new instance cancels a pending driver-unusable (kubelet: "new plugin instance registered").
    this.#cancelUnusable(driver);
    try {
      await this.#delegate?.registerPlugin(name, endpoint, versions, context);
    } catch (err) {
      this.#removeInstance(name, instance);
      throw err;
    }
    driver.registered = true;
    // A connection that already failed while the registration was finishing counts from now.
    this.#usabilityChanged(name, driver);
    this.#logger.debug({ name, endpoint, service: choice.service }, 'DRA plugin instance registered');
  }

  async deRegisterPlugin(name: string, endpoint: string, context: PluginCallContext) {
    const instance = this.#drivers.get(name)?.instances.find((i) => i.endpoint === endpoint);
    if (instance === undefined) {
      this.#logger.debug({ name, endpoint }, 'deregistering a DRA plugin instance berth does not know');
    } else {
      this.#removeInstance(name, instance);
    }
    await this.#delegate?.deRegisterPlugin(name, endpoint, context);
  }

  #driver(name: string): DriverState {
    let driver = this.#drivers.get(name);
    if (driver === undefined) {
      driver = { instances: [], unusableSince: null, timer: undefined, reported: false, registered: false };
      this.#drivers.set(name, driver);
    }
    return driver;
  }

  #removeInstance(name: string, instance: Instance): void {
    const driver = this.#drivers.get(name);
    if (driver === undefined) return;
    const index = driver.instances.indexOf(instance);
    if (index >= 0) driver.instances.splice(index, 1);
    instance.connection.close();
    this.#usabilityChanged(name, driver);
  }

  #connectionChanged(name: string, endpoint: string, state: ConnectionState): void {
    const driver = this.#drivers.get(name);
    if (driver === undefined || this.#stopped) return;
    this.#logger.debug({ name, endpoint, state }, 'DRA plugin connection changed');
    this.#usabilityChanged(name, driver);
  }

  /** Re-evaluates usability: start the wipe-delay clock when none is connected, stop it when one is. */
  #usabilityChanged(name: string, driver: DriverState): void {
    if (this.#stopped) return;
    if (driver.instances.some((i) => i.connection.connected)) {
      this.#cancelUnusable(driver);
      return;
    }
    if (!driver.registered) {
      if (driver.instances.length === 0 && this.#drivers.get(name) === driver) this.#drivers.delete(name);
      return;
    }
    if (driver.timer !== undefined || driver.reported) return;
    const { clock } = this.#services;
    driver.unusableSince ??= clock.now();
    const since = driver.unusableSince;
    driver.timer = clock.setTimeout(() => {
      driver.timer = undefined;
      driver.reported = true;
      this.#logger.info({ name, since: new Date(since).toISOString() }, 'DRA driver unusable');
      this.#services.emit({
        type: 'driver-unusable',
        at: clock.now(),
        plugin: { type: DRAPlugin, name },
        since,
      });
      // A driver with no instances left and nothing pending is forgotten.
      if (driver.instances.length === 0 && this.#drivers.get(name) === driver) this.#drivers.delete(name);
    }, this.#options.wipeDelayMs);
  }

  #cancelUnusable(driver: DriverState): void {
    if (driver.timer !== undefined) this.#services.clock.clearTimeout(driver.timer);
    driver.timer = undefined;
    driver.reported = false;
    driver.unusableSince = null;
  }

  /** The instance calls go to: the newest connected one, else the newest. */
  #choose(name: string): Instance {
    if (name === '') throw new BerthError('BERTH_INVALID_ARGUMENT', 'DRA driver name is empty');
    const instances = this.#drivers.get(name)?.instances ?? [];
    if (instances.length === 0) {
      throw new BerthError('BERTH_PLUGIN_NOT_FOUND', `DRA driver ${name} is not registered`);
    }
    const newestFirst = [...instances].sort((a, b) => b.seq - a.seq);
    return newestFirst.find((i) => i.connection.connected) ?? (newestFirst[0] as Instance);
  }

  drivers(): DraDriverView[] {
    const out: DraDriverView[] = [];
    for (const [name, driver] of this.#drivers) {
      if (driver.instances.length === 0) continue;
      const chosen = this.#choose(name);
      out.push({
        name,
        usable: driver.instances.some((i) => i.connection.connected),
        chosen: { endpoint: chosen.endpoint, service: chosen.service },
        unusableSince: driver.unusableSince,
        instances: [...driver.instances]
          .sort((a, b) => b.seq - a.seq)
          .map((i) => ({
            endpoint: i.endpoint,
            socketPath: i.socketPath,
            service: i.service,
            state: i.connection.state,
            connected: i.connection.connected,
            registeredAt: i.registeredAt,
          })),
        ...(this.#services.mode === 'observe' ? { observed: true as const } : {}),
      });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** An observer prepares no claim: the kubelet owns the driver (only connection state is watched). */
  #refuseWhenObserving(call: string, name: string): void {
    if (this.#services.mode !== 'observe') return;
    throw new BerthError(
      'BERTH_OBSERVE_ONLY',
      `cannot call ${call} on DRA driver ${name}: berth observes it (another registrar owns it) and prepares no claim`,
    );
  }

  /** NodePrepareResources on the chosen instance, with the kubelet's per-claim rules. */
  async prepare(name: string, claims: ClaimRef[], signal?: AbortSignal): Promise<ClaimsResult> {
    this.#refuseWhenObserving('NodePrepareResources', name);
    checkClaims(claims, this.#options.maxClaimsPerCall);
    const instance = this.#choose(name);
    const { callUnary, draApis } = await draGrpc(); // loaded when the instance registered
    const api = draApis[instance.service];
    const response = await this.#call('NodePrepareResources', instance, () =>
      callUnary(
        instance.connection.client,
        api.prepare,
        api.prepareRequest(claims),
        instance.callTimeoutMs,
        signal,
        'DRA NodePrepareResources',
      ),
    );
    const results: ClaimResult[] = claims.map((claim) => {
      const answer = response.claims[claim.uid];
      if (answer === undefined) return { ...claim, ok: false, error: missingText('NodePrepareResources') };
      if (answer.error !== '') return { ...claim, ok: false, error: answer.error };
      return {
        ...claim,
        ok: true,
        error: null,
        devices: answer.devices.map((d) => ({
          requestNames: [...d.requestNames],
          poolName: d.poolName,
          deviceName: d.deviceName,
          cdiDeviceIds: [...d.cdiDeviceIds],
        })),
      };
    });
    return this.#result(name, instance, claims, results, Object.keys(response.claims));
  }

  /** NodeUnprepareResources on the chosen instance; every claim must have an entry, even an empty one. */
  async unprepare(name: string, claims: ClaimRef[], signal?: AbortSignal): Promise<ClaimsResult> {
    this.#refuseWhenObserving('NodeUnprepareResources', name);
    checkClaims(claims, this.#options.maxClaimsPerCall);
    const instance = this.#choose(name);
    const { callUnary, draApis } = await draGrpc(); // loaded when the instance registered
    const api = draApis[instance.service];
    const response = await this.#call('NodeUnprepareResources', instance, () =>
      callUnary(
        instance.connection.client,
        api.unprepare,
        api.unprepareRequest(claims),
        instance.callTimeoutMs,
        signal,
        'DRA NodeUnprepareResources',
      ),
    );
    const results: ClaimResult[] = claims.map((claim) => {
      const answer = response.claims[claim.uid];
      if (answer === undefined) return { ...claim, ok: false, error: missingText('NodeUnprepareResources') };
      if (answer.error !== '') return { ...claim, ok: false, error: answer.error };
      return { ...claim, ok: true, error: null };
    });
    return this.#result(name, instance, claims, results, Object.keys(response.claims));
  }

  #result(
    name: string,
    instance: Instance,
    claims: ClaimRef[],
    results: ClaimResult[],
    answered: string[],
  ): ClaimsResult {
    const asked = new Set(claims.map((c) => c.uid));
    return {
      driver: name,
      endpoint: instance.endpoint,
      service: instance.service,
      ok: results.every((r) => r.ok),
      claims: results,
      unexpected: answered.filter((uid) => !asked.has(uid)).sort(),
    };
  }

  async #call<T>(method: string, instance: Instance, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof BerthError) throw err;
      // A gRPC-level error: the whole response is ignored, as in the kubelet.
      throw new BerthError(
        'BERTH_PLUGIN_CALL_FAILED',
        `${method} of DRA driver ${instance.name} at ${instance.endpoint} failed: ${grpcErrorText(err)}`,
        { cause: err },
      );
    }
  }

  #closeAll(): void {
    this.#stopped = true;
    for (const driver of this.#drivers.values()) {
      if (driver.timer !== undefined) this.#services.clock.clearTimeout(driver.timer);
      driver.timer = undefined;
      for (const instance of driver.instances) instance.connection.close();
    }
  }
}

export function createDraHandler(services: HandlerServices, delegate?: PluginHandler): DraHandler {
  return new DraHandler(services, delegate);
}
