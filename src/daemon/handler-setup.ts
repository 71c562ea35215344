import { createDeviceManagerDelegate, type DevicePluginManager } from '../handlers/device-plugin/index.js';
import {
  createCsiHandler,
  createDevicePluginHandler,
  createDraHandler,
  createVersionedHandler,
  type PluginHandler,
} from '../handlers/index.js';
import type { HandlerConfig } from './config/config.js';

/**
 * The handler for every plugin type the daemon accepts: the kubelet's three
 * built-in types, plus a versioned handler for each configured type (the
 * example type is always among them). Each handler validates, then delegates
 * to the registry bridge so the plugin lands in the registry.
 */
export function buildHandlers(
  extra: readonly HandlerConfig[],
  delegateFor: (type: string) => PluginHandler,
  devicePlugins?: DevicePluginManager,
): Map<string, PluginHandler> {
  // Device plugins are connected (options, ListAndWatch) before the registry records them.
  const deviceDelegate = devicePlugins
    ? createDeviceManagerDelegate(devicePlugins, delegateFor('DevicePlugin'))
    : delegateFor('DevicePlugin');
  const handlers = new Map<string, PluginHandler>([
    ['CSIPlugin', createCsiHandler({ delegate: delegateFor('CSIPlugin') })],
    ['DevicePlugin', createDevicePluginHandler({ delegate: deviceDelegate })],
    ['DRAPlugin', createDraHandler({ delegate: delegateFor('DRAPlugin') })],
  ]);
  for (const { type, versions } of extra) {
    handlers.set(type, createVersionedHandler({ type, versions, delegate: delegateFor(type) }));
  }
  return handlers;
}
