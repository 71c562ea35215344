import {
  createCsiHandler,
  createDevicePluginHandler,
  createDraHandler,
  createVersionedHandler,
  type PluginHandler,
} from '../handlers/index.js';
import type { HandlerConfig } from './config.js';

/**
 * The handler for every plugin type the daemon accepts: the kubelet's three
 * built-in types, plus a versioned handler for each configured type (the
 * example type is always among them). Each handler validates, then delegates
 * to the registry bridge so the plugin lands in the registry.
 */
export function buildHandlers(
  extra: readonly HandlerConfig[],
  delegateFor: (type: string) => PluginHandler,
): Map<string, PluginHandler> {
  const handlers = new Map<string, PluginHandler>([
    ['CSIPlugin', createCsiHandler({ delegate: delegateFor('CSIPlugin') })],
    ['DevicePlugin', createDevicePluginHandler({ delegate: delegateFor('DevicePlugin') })],
    ['DRAPlugin', createDraHandler({ delegate: delegateFor('DRAPlugin') })],
  ]);
  for (const { type, versions } of extra) {
    handlers.set(type, createVersionedHandler({ type, versions, delegate: delegateFor(type) }));
  }
  return handlers;
}

/**
 * Wraps a registry delegate so that deregistrations caused by berth itself
 * shutting down (operations aborted mid-way, which the plugin manager rolls
 * back) do not reach the registry: the plugins have not gone anywhere, and
 * the persisted registry must survive the stop. The next start confirms or
 * drops each instance on facts.
 */
export function keepRegistryOnShutdown(delegate: PluginHandler, isStopping: () => boolean): PluginHandler {
  return {
    validatePlugin: (name, endpoint, versions, context) =>
      delegate.validatePlugin(name, endpoint, versions, context),
    registerPlugin: (name, endpoint, versions, context) =>
      delegate.registerPlugin(name, endpoint, versions, context),
    deRegisterPlugin: (name, endpoint, context) => {
      if (isStopping()) return;
      return delegate.deRegisterPlugin(name, endpoint, context);
    },
  };
}
