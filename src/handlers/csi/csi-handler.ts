/**
 * The CSIPlugin handler: what the kubelet's CSI plugin does with a driver
 * that registers (pkg/volume/csi/csi_plugin.go), minus the Kubernetes API.
 * Validate and register with the kubelet's version rules and texts; on
 * register ask the driver for its identity, health, node capabilities and
 * node info; keep a CSINode-like entry per driver and record the facts on
 * the registry instance; drop the entry when the instance that set it goes.
 */
import { AbortScope, BerthError, LifecycleComponent, type Logger, loadOnce } from '../../common/index.js';
import type { GenericVersion } from '../generic-version.js';
import type {
  BuiltinHandler,
  HandlerServices,
  PluginCallContext,
  PluginHandler,
  RegisterContext,
} from '../types.js';
import type { CsiNodeInfo } from './csi-node-info.js';
import { type CsiHandlerOptions, csiOptions } from './csi-options.js';
import { topologyProblem } from './csi-topology.js';
import { CSI_LOG_PREFIX, checkCsiRegister, checkCsiValidate } from './csi-versions.js';

export const CSIPlugin = 'CSIPlugin';

/** The calls made when a driver registers: grpc-js and the csi.v1 messages, loaded with the first driver. */
const nodeInfoCalls = loadOnce(() => import('./csi-node-info.js'));

/** One registered driver, shaped like a CSINode `spec.drivers` entry plus what berth learnt. */
export interface CsiDriverView {
  name: string;
  nodeId: string;
  /** CSINode `allocatable.count`; null when the driver reports no limit. */
  maxVolumesPerNode: number | null;
  /** Sorted keys of the accessible topology (CSINode `topologyKeys`). */
  topologyKeys: string[];
  accessibleTopology: Record<string, string> | null;
  vendorVersion: string | null;
  /** Node service capabilities (STAGE_UNSTAGE_VOLUME, ...); null when NodeGetCapabilities failed. */
  capabilities: string[] | null;
  ready: boolean | null;
  /** The CSI version chosen (the highest 1.x the driver listed). */
  version: string;
  endpoint: string;
  socketPath: string;
  registeredAt: number;
  warnings: string[];
  /** Present (true) in observe mode: berth only asked the driver (read-only calls); the kubelet owns it. */
  observed?: true;
}

interface DriverEntry {
  name: string;
  endpoint: string;
  socketPath: string;
  highest: GenericVersion;
  /** Undefined while register is asking the driver (the store is set first, as upstream). */
  info?: CsiNodeInfo;
  registeredAt: number;
}

export class CsiHandler extends LifecycleComponent implements BuiltinHandler {
  readonly type = CSIPlugin;
  readonly #services: HandlerServices;
  readonly #delegate: PluginHandler | undefined;
  readonly #options: CsiHandlerOptions;
  readonly #logger: Logger;
  readonly #drivers = new Map<string, DriverEntry>();
  /** One signal per registration asking its driver (a listener per call on one shared signal leaked warnings). */
  readonly #calls = new AbortScope();
  // Stopping cuts short any registration still asking its driver.

  constructor(services: HandlerServices, delegate?: PluginHandler) {
    super();
    this.#services = services;
    this.#delegate = delegate;
    this.#options = csiOptions(services.options);
    this.#logger = services.logger;
  }

  protected override onStop(): Promise<void> | void {
    return this.#calls.abort(new BerthError('BERTH_SHUT_DOWN', 'the CSI handler is stopping'));
  }

  async validatePlugin(name: string, endpoint: string, versions: string[], context: PluginCallContext) {
    checkCsiValidate(name, endpoint, versions, this.#drivers.get(name)?.highest);
    await this.#delegate?.validatePlugin(name, endpoint, versions, context);
  }

  async registerPlugin(name: string, endpoint: string, versions: string[], context: RegisterContext) {
    // Loaded before the checks, so the check and the store below stay one synchronous step.
    const { NodeGetInfoError, queryCsiDriver } = await nodeInfoCalls();
    const highest = checkCsiRegister(name, versions, this.#drivers.get(name)?.highest);
    const previous = this.#drivers.get(name);
    const entry: DriverEntry = {
      name,
      endpoint,
      socketPath: context.socketPath,
      highest,
      registeredAt: this.#services.clock.now(),
    };
    this.#drivers.set(name, entry);
    const undo = () => {
      // Only if nothing replaced it meanwhile; a higher version that was replaced comes back.
      if (this.#drivers.get(name) !== entry) return;
      if (previous === undefined) this.#drivers.delete(name);
      else this.#drivers.set(name, previous);
    };
    const timeoutMs = context.pluginClientTimeoutMs ?? this.#options.callTimeoutMs;
    let info: CsiNodeInfo;
    try {
      info = await this.#calls.run((signal) =>
        queryCsiDriver(endpoint, { deadline: Date.now() + timeoutMs, signal }),
      );
    } catch (err) {
      undo();
      if (err instanceof NodeGetInfoError) {
        this.#logger.warn(
          { name, endpoint, err: err.message },
          `${CSI_LOG_PREFIX}registrationHandler.RegisterPlugin failed at CSI.NodeGetInfo`,
        );
        // The kubelet returns NodeGetInfo's own error; the plugin manager retries with backoff.
        throw new BerthError(
          'BERTH_REGISTER_FAILED',
          `${CSI_LOG_PREFIX}registrationHandler.RegisterPlugin failed at CSI.NodeGetInfo: ${err.message}`,
          { cause: err },
        );
      }
      throw err;
    }
    if (info.nodeId === '') {
      undo();
      throw new BerthError(
        'BERTH_REGISTER_FAILED',
        'error adding CSI driver node info: driverNodeID must not be empty',
      );
    }
    const topology = info.accessibleTopology === null ? undefined : topologyProblem(info.accessibleTopology);
    if (topology !== undefined) {
      undo();
      throw new BerthError(
        'BERTH_REGISTER_FAILED',
        `${CSI_LOG_PREFIX}registrationHandler.RegisterPlugin failed at CSI.NodeGetInfo: ${topology}`,
      );
    }
    for (const warning of info.warnings)
      this.#logger.warn({ name, endpoint }, `CSI driver call failed: ${warning}`);
    if (info.pluginName !== null && info.pluginName !== name) {
      this.#logger.warn(
        { name, endpoint, reported: info.pluginName },
        'CSI driver reports a different name in GetPluginInfo than in its registration',
      );
    }
    entry.info = info;
    try {
      this.#services.recordFacts({ type: CSIPlugin, name, socketPath: context.socketPath }, csiFacts(info));
      await this.#delegate?.registerPlugin(name, endpoint, versions, context);
    } catch (err) {
      undo();
      throw err;
    }
    if (previous !== undefined) {
      this.#logger.info(
        { name, from: previous.highest.toString(), to: highest.toString() },
        'CSI driver replaced by a higher version',
      );
    }
  }

  async deRegisterPlugin(name: string, endpoint: string, context: PluginCallContext) {
    const entry = this.#drivers.get(name);
    // The kubelet deletes by name; berth only when the going instance is the one that set it,
    // so an older instance leaving does not take a newer driver's entry with it.
    if (entry !== undefined && entry.socketPath === context.socketPath) this.#drivers.delete(name);
    await this.#delegate?.deRegisterPlugin(name, endpoint, context);
  }

  /** The endpoint and node id of the registered driver of that name (for the volumes API); undefined while none is. */
  lookupDriver(name: string): { endpoint: string; nodeId: string } | undefined {
    const entry = this.#drivers.get(name);
    if (entry?.info === undefined) return undefined;
    return { endpoint: entry.endpoint, nodeId: entry.info.nodeId };
  }

  /** The handler's resolved options (call timeouts, the volumes' mount root). */
  get options(): CsiHandlerOptions {
    return this.#options;
  }

  /** One entry per registered driver (sorted by name), CSINode-like. */
  drivers(): CsiDriverView[] {
    const out: CsiDriverView[] = [];
    for (const entry of this.#drivers.values()) {
      const info = entry.info;
      if (info === undefined) continue;
      out.push({
        name: entry.name,
        nodeId: info.nodeId,
        maxVolumesPerNode: info.maxVolumesPerNode,
        topologyKeys: Object.keys(info.accessibleTopology ?? {}).sort(),
        accessibleTopology: info.accessibleTopology,
        vendorVersion: info.vendorVersion,
        capabilities: info.capabilities,
        ready: info.ready,
        version: entry.highest.toString(),
        endpoint: entry.endpoint,
        socketPath: entry.socketPath,
        registeredAt: entry.registeredAt,
        warnings: [...info.warnings],
        ...(this.#services.mode === 'observe' ? { observed: true as const } : {}),
      });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }
}

/** The facts recorded on the registry instance (string entries of its options). */
export function csiFacts(info: CsiNodeInfo): Record<string, string> {
  const facts: Record<string, string> = {
    'csi.nodeId': info.nodeId,
    'csi.maxVolumesPerNode': info.maxVolumesPerNode === null ? '' : String(info.maxVolumesPerNode),
    'csi.accessibleTopology': JSON.stringify(info.accessibleTopology),
    'csi.vendorVersion': info.vendorVersion ?? '',
    'csi.capabilities': JSON.stringify(info.capabilities),
  };
  return facts;
}

export function createCsiHandler(services: HandlerServices, delegate?: PluginHandler): CsiHandler {
  return new CsiHandler(services, delegate);
}
