/**
 * The one table of built-in handlers: the kubelet's plugin types, each with
 * the factory that builds its handler from HandlerServices. Everything that
 * needs the list of built-in types reads it from here: the daemon's handler
 * setup (one handler per entry), the registry's dispensers, config
 * validation (a config file cannot redefine a built-in type) and the config
 * schema's `handlerOptions` section (each type's own `options`, from its
 * light `*-options.ts`).
 *
 * This file is the handlers folder's light entry point (like
 * daemon/contract.ts): it loads no handler code, so the CLI and the config
 * schema can import it without pulling in gRPC. `load()` imports the
 * handler's module when a daemon (or a library user) builds it.
 *
 * Adding a type: one entry here, keyed by its PluginInfo.type.
 */
import { CSI_CONFIG_OPTIONS, CSI_CONTROLLER_CONFIG_OPTIONS } from './csi/csi-options.js';
import type { CsiControllerHandler, CsiHandler } from './csi/index.js';
import { DEVICE_PLUGIN_CONFIG_OPTIONS } from './device-plugin/device-plugin-options.js';
import type { DevicePluginBuiltinHandler } from './device-plugin/index.js';
import { DRA_CONFIG_OPTIONS } from './dra/dra-options.js';
import type { DraHandler } from './dra/index.js';
import type { BuiltinHandler, BuiltinHandlerFactory, HandlerConfigOptions } from './types.js';

export interface BuiltinHandlerEntry<H extends BuiltinHandler = BuiltinHandler> {
  /** The `PluginInfo.type` the kubelet uses for these plugins. */
  readonly type: string;
  /** One line on what the handler does after registration (for docs and status). */
  readonly summary: string;
  /** Its `handlerOptions.<type>` config section, from the type's own light `*-options.ts`. */
  readonly options: HandlerConfigOptions;
  /** Loads the handler's module and returns its factory. */
  load(): Promise<BuiltinHandlerFactory<H>>;
}

export const builtinHandlers = {
  CSIPlugin: {
    type: 'CSIPlugin',
    summary: 'CSI drivers: kubelet version rules; node info, capabilities and health asked on registration',
    options: CSI_CONFIG_OPTIONS,
    load: async () => (await import('./csi/index.js')).createCsiHandler,
  } satisfies BuiltinHandlerEntry<CsiHandler>,
  'csi-controller': {
    type: 'csi-controller',
    summary:
      "CSI controller plugins registered apart from the node plugin (Nomad's csi-controller): the volumes API's Controller calls",
    options: CSI_CONTROLLER_CONFIG_OPTIONS,
    load: async () => (await import('./csi/index.js')).createCsiControllerHandler,
  } satisfies BuiltinHandlerEntry<CsiControllerHandler>,
  DevicePlugin: {
    type: 'DevicePlugin',
    summary:
      'device plugins: kubelet version and resource-name rules; live inventory from ListAndWatch, durable allocations',
    options: DEVICE_PLUGIN_CONFIG_OPTIONS,
    load: async () => (await import('./device-plugin/index.js')).createDevicePluginBuiltin,
  } satisfies BuiltinHandlerEntry<DevicePluginBuiltinHandler>,
  DRAPlugin: {
    type: 'DRAPlugin',
    summary: 'DRA drivers: instances per driver, watched connections, prepare/unprepare of claims',
    options: DRA_CONFIG_OPTIONS,
    load: async () => (await import('./dra/index.js')).createDraHandler,
  } satisfies BuiltinHandlerEntry<DraHandler>,
} as const;

export type BuiltinHandlerType = keyof typeof builtinHandlers;

/** The handler type each entry builds. */
export type BuiltinHandlerOf<T extends BuiltinHandlerType> = ReturnType<
  Awaited<ReturnType<(typeof builtinHandlers)[T]['load']>>
>;

/** The built-in types, in table order. */
export const BUILTIN_HANDLER_TYPES = Object.keys(builtinHandlers) as BuiltinHandlerType[];

export function isBuiltinHandlerType(type: string): type is BuiltinHandlerType {
  return Object.hasOwn(builtinHandlers, type);
}
