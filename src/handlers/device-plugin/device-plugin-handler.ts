/**
 * The plugins-directory way in: a PluginHandler for type DevicePlugin that
 * connects the device manager on register and disconnects that instance on
 * deregister, around an optional next handler (the daemon's registry bridge).
 * The kubelet's version and resource-name checks stay in the built-in
 * handler (version-handlers.ts), which calls this one as its delegate.
 */
import { errorMessage } from '../../common/index.js';
import type { PluginCallContext, PluginHandler, RegisterContext } from '../types.js';
import type { DevicePluginManager } from './device-manager.js';

export function createDeviceManagerDelegate(
  manager: DevicePluginManager,
  next?: PluginHandler,
): PluginHandler {
  return {
    async validatePlugin(name: string, endpoint: string, versions: string[], context: PluginCallContext) {
      await next?.validatePlugin(name, endpoint, versions, context);
    },
    async registerPlugin(name: string, endpoint: string, versions: string[], context: RegisterContext) {
      // An empty endpoint means the plugin serves on its registration socket (the upstream stub does).
      const target = endpoint === '' ? context.socketPath : endpoint;
      await manager.connect(name, target, { via: 'plugins-dir', registrationSocket: context.socketPath });
      try {
        await next?.registerPlugin(name, endpoint, versions, context);
      } catch (err) {
        await manager.disconnect(name, context.socketPath).catch(() => false);
        throw new Error(errorMessage(err), { cause: err });
      }
    },
    async deRegisterPlugin(name: string, endpoint: string, context: PluginCallContext) {
      await manager.disconnect(name, context.socketPath);
      await next?.deRegisterPlugin(name, endpoint, context);
    },
  };
}
