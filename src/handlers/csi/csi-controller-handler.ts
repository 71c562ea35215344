/**
 * The `csi-controller` handler: a CSI driver's controller plugin registered on
 * its own (Nomad's csi-controller plugin type), for deployments that run the
 * controller service apart from the node plugin (a controller Deployment
 * beside a node DaemonSet). The node plugin registers as the kubelet's
 * CSIPlugin; the volumes API sends Controller calls (CreateVolume,
 * DeleteVolume, ControllerPublish and Unpublish) to the controller plugin of
 * the driver's name when one is registered, and everything else to the node
 * plugin. The kubelet has no such type: its controller plugins never register
 * on the node.
 *
 * Validation follows the CSIPlugin rules (1.x versions, the highest chosen, a
 * name that is registered only moves to a higher version). Registration asks
 * the plugin for its controller capabilities, a read-only call, and fails
 * (and is retried) when the plugin serves no Controller service.
 */
import { AbortScope, BerthError, errorMessage, LifecycleComponent } from '../../common/index.js';
import type { GenericVersion } from '../generic-version.js';
import type {
  BuiltinHandler,
  HandlerServices,
  PluginCallContext,
  PluginHandler,
  RegisterContext,
} from '../types.js';
import { csiOptions } from './csi-options.js';
import { checkCsiRegister, checkCsiValidate } from './csi-versions.js';
import { openCsiVolumeClient } from './csi-volume-client.js';

/** Nomad's plugin type for a controller-only CSI plugin. */
export const CSI_CONTROLLER = 'csi-controller';

/** One registered controller plugin. */
export interface CsiControllerView {
  name: string;
  endpoint: string;
  socketPath: string;
  version: string;
  /** Controller RPC capabilities (CREATE_DELETE_VOLUME, PUBLISH_UNPUBLISH_VOLUME, ...). */
  capabilities: string[];
  registeredAt: number;
  /** Present (true) in observe mode: berth only asked the plugin (a read-only call). */
  observed?: true;
}

interface ControllerEntry {
  name: string;
  endpoint: string;
  socketPath: string;
  highest: GenericVersion;
  capabilities: string[];
  registeredAt: number;
}

export class CsiControllerHandler extends LifecycleComponent implements BuiltinHandler {
  readonly type = CSI_CONTROLLER;
  readonly #services: HandlerServices;
  readonly #delegate: PluginHandler | undefined;
  readonly #callTimeoutMs: number;
  readonly #controllers = new Map<string, ControllerEntry>();
  readonly #calls = new AbortScope();

  constructor(services: HandlerServices, delegate?: PluginHandler) {
    super();
    this.#services = services;
    this.#delegate = delegate;
    this.#callTimeoutMs = csiOptions(services.options).callTimeoutMs;
  }

  // Stopping cuts short any registration still asking its plugin.
  protected override onStop(): Promise<void> | void {
    return this.#calls.abort(new BerthError('BERTH_SHUT_DOWN', 'the CSI controller handler is stopping'));
  }

  async validatePlugin(name: string, endpoint: string, versions: string[], context: PluginCallContext) {
    checkCsiValidate(name, endpoint, versions, this.#controllers.get(name)?.highest);
    await this.#delegate?.validatePlugin(name, endpoint, versions, context);
  }

  async registerPlugin(name: string, endpoint: string, versions: string[], context: RegisterContext) {
    const highest = checkCsiRegister(name, versions, this.#controllers.get(name)?.highest);
    const timeoutMs = context.pluginClientTimeoutMs ?? this.#callTimeoutMs;
    let capabilities: string[];
    try {
      capabilities = await this.#calls.run(async (signal) => {
        const client = await openCsiVolumeClient(name, endpoint, {
          callTimeoutMs: timeoutMs,
          deadline: Date.now() + timeoutMs,
          signal,
        });
        try {
          return await client.controllerCapabilities();
        } finally {
          client.close();
        }
      });
    } catch (err) {
      throw new BerthError(
        'BERTH_REGISTER_FAILED',
        `CSI controller plugin ${name} at ${endpoint}: ControllerGetCapabilities failed: ${errorMessage(err)}`,
        { cause: err },
      );
    }
    if (capabilities.length === 0) {
      throw new BerthError(
        'BERTH_REGISTER_FAILED',
        `CSI controller plugin ${name} at ${endpoint} serves no Controller capability; register it as CSIPlugin instead`,
      );
    }
    const previous = this.#controllers.get(name);
    const entry: ControllerEntry = {
      name,
      endpoint,
      socketPath: context.socketPath,
      highest,
      capabilities,
      registeredAt: this.#services.clock.now(),
    };
    this.#controllers.set(name, entry);
    try {
      this.#services.recordFacts(
        { type: CSI_CONTROLLER, name, socketPath: context.socketPath },
        { 'csi.controllerCapabilities': JSON.stringify(capabilities) },
      );
      await this.#delegate?.registerPlugin(name, endpoint, versions, context);
    } catch (err) {
      if (this.#controllers.get(name) === entry) {
        if (previous === undefined) this.#controllers.delete(name);
        else this.#controllers.set(name, previous);
      }
      throw err;
    }
  }

  async deRegisterPlugin(name: string, endpoint: string, context: PluginCallContext) {
    // Only when the going instance is the one that set it (a newer one stays).
    if (this.#controllers.get(name)?.socketPath === context.socketPath) this.#controllers.delete(name);
    await this.#delegate?.deRegisterPlugin(name, endpoint, context);
  }

  /** The endpoint of the registered controller plugin of that driver name, or undefined. */
  lookupController(name: string): string | undefined {
    return this.#controllers.get(name)?.endpoint;
  }

  /** One entry per registered controller plugin, sorted by name. */
  controllers(): CsiControllerView[] {
    return [...this.#controllers.values()]
      .map((entry) => ({
        name: entry.name,
        endpoint: entry.endpoint,
        socketPath: entry.socketPath,
        version: entry.highest.toString(),
        capabilities: [...entry.capabilities],
        registeredAt: entry.registeredAt,
        ...(this.#services.mode === 'observe' ? { observed: true as const } : {}),
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }
}

export function createCsiControllerHandler(
  services: HandlerServices,
  delegate?: PluginHandler,
): CsiControllerHandler {
  return new CsiControllerHandler(services, delegate);
}
