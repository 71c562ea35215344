/**
 * The DevicePlugin entry of the builtinHandlers table: the kubelet's version
 * and resource-name checks (version-handlers.ts), then the device manager
 * (connect on register, disconnect that instance on deregister), then the
 * owner's delegate (the daemon's registry bridge). Built from
 * HandlerServices: allocations live in `<dataDir>/devices.db`, the legacy
 * socket in `<dataDir>/device-plugins/kubelet.sock` unless
 * `handlerOptions.DevicePlugin.socketDir` says otherwise (false: none).
 */
import { join } from 'node:path';
import type { BuiltinHandler, HandlerServices, PluginHandler } from '../types.js';
import { createDevicePluginHandler, DevicePlugin } from '../version-handlers.js';
import { createDevicePluginManager, type DevicePluginManager } from './device-manager.js';
import { createDeviceManagerDelegate } from './device-plugin-handler.js';
import {
  devicePluginHandlerOptions,
  LEGACY_SOCKET,
  type LegacyRecord,
  SUPPORTED_DEVICE_PLUGIN_VERSIONS,
} from './device-plugin-options.js';

export interface DevicePluginBuiltinHandler extends BuiltinHandler {
  /** The inventory and allocations (the API's /v1/devices). */
  readonly manager: DevicePluginManager;
}

export function createDevicePluginBuiltin(
  services: HandlerServices,
  delegate?: PluginHandler,
): DevicePluginBuiltinHandler {
  const options = devicePluginHandlerOptions(services.options);
  const observe = services.mode === 'observe';
  // An observer serves no kubelet.sock: the kubelet beside it owns the legacy registration path.
  const socketDir = observe
    ? false
    : options.socketDir === undefined
      ? join(services.dataDir, LEGACY_SOCKET.defaultSubdir)
      : options.socketDir;
  const manager = createDevicePluginManager({
    databasePath: join(services.dataDir, 'devices.db'),
    ...(socketDir === false ? {} : { socketDir }),
    ...(options.gracePeriodMs === undefined ? {} : { gracePeriodMs: options.gracePeriodMs }),
    clock: services.clock,
    logger: services.logger,
    onEvent: (event) => services.emit(event),
    ...(observe ? { observe } : {}),
    ...(delegate === undefined ? {} : { legacyRecord: legacyRecordIn(delegate) }),
  });
  const checking = createDevicePluginHandler({ delegate: createDeviceManagerDelegate(manager, delegate) });
  return {
    type: checking.type,
    manager,
    validatePlugin: (name, endpoint, versions, context) =>
      checking.validatePlugin(name, endpoint, versions, context),
    registerPlugin: (name, endpoint, versions, context) =>
      checking.registerPlugin(name, endpoint, versions, context),
    deRegisterPlugin: (name, endpoint, context) => checking.deRegisterPlugin(name, endpoint, context),
    start: (signal) => manager.start(signal),
    stop: () => manager.stop(),
  };
}

/**
 * kubelet.sock registrations go to the same next handler (the registry
 * bridge) as plugins-directory ones: a DevicePlugin instance named by the
 * resource, identified by the plugin's endpoint, with source "kubelet.sock".
 */
function legacyRecordIn(next: PluginHandler): LegacyRecord {
  const context = (endpoint: string) => ({
    type: DevicePlugin,
    socketPath: endpoint,
    foundInDeprecatedDir: false,
    source: 'kubelet.sock' as const,
  });
  return {
    registered: async (resource, endpoint) => {
      await next.registerPlugin(resource, endpoint, [...SUPPORTED_DEVICE_PLUGIN_VERSIONS], context(endpoint));
    },
    gone: async (resource, endpoint) => {
      await next.deRegisterPlugin(resource, endpoint, context(endpoint));
    },
  };
}
