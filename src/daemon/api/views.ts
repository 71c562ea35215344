import type { PluginEvent, PluginInstanceInfo } from '../../common/index.js';
import type { CsiDriverView } from '../../handlers/csi/index.js';
import type { AllocationView, ResourceView } from '../../handlers/device-plugin/index.js';
import type { DraDriverView } from '../../handlers/dra/index.js';
import { OBSERVED_OPTION } from '../../registry/index.js';
import type { SocketStatus } from './api-types.js';
import type {
  CsiDriverStatusView,
  DeviceAllocationView,
  DeviceResourceView,
  DraDriverStatusView,
  EventView,
  PluginView,
  SocketView,
} from './wire-types.js';

/**
 * Components' records as the API's JSON shapes (named in wire-types.ts).
 * Times are ISO strings; the same plugin shape is used by /v1/plugins,
 * /v1/plugins/{type}/{name} and the event stream.
 */
export type { EventView, PluginView, SocketView };

export function isoTime(ms: number | undefined | null): string | null {
  return ms === undefined || ms === null ? null : new Date(ms).toISOString();
}

function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/**
 * A registry instance as the API shows it. The plugin-manager bridge keys an
 * instance by its registration socket (allocId) and keeps the service endpoint
 * in connectionInfo; the supported versions travel in options.
 */
export function pluginView(info: PluginInstanceInfo): PluginView {
  const versions = splitList(info.options.supportedVersions ?? info.options.versions) ?? [];
  return {
    type: info.type,
    name: info.name,
    version: info.version,
    endpoint: info.options.endpoint ?? info.connectionInfo?.socketPath ?? null,
    versions,
    socketPath: info.options.socketPath ?? info.allocId,
    registeredAt: isoTime(info.registeredAt),
    source: info.options.source ?? null,
    options: { ...info.options },
    observed: info.options[OBSERVED_OPTION] === 'true',
  };
}

export function socketView(status: SocketStatus): SocketView {
  return {
    socketPath: status.socketPath,
    state: status.state,
    plugin: status.plugin ? { type: status.plugin.type, name: status.plugin.name } : null,
    endpoint: status.endpoint ?? null,
    versions: status.versions ?? [],
    lastError: status.lastError ? { code: status.lastError.code, message: status.lastError.message } : null,
    retryAt: isoTime(status.retryAt),
    attempts: status.attempts,
    registeredAt: isoTime(status.registeredAt),
    verdict: status.verdict
      ? { accepted: status.verdict.accepted, error: status.verdict.error ?? null }
      : null,
  };
}

/** An event as sent on /v1/events (data: line) and printed by `berth events --json`. */
export function eventView(event: PluginEvent): EventView {
  const at = isoTime(event.at);
  switch (event.type) {
    case 'registered':
    case 'deregistered':
      return { type: event.type, at, plugin: pluginView(event.plugin) };
    case 'updated':
      return { type: event.type, at, plugin: pluginView(event.plugin), previous: pluginView(event.previous) };
    case 'failed':
      return {
        type: event.type,
        at,
        socketPath: event.socketPath,
        plugin: event.plugin ? { type: event.plugin.type, name: event.plugin.name } : null,
        error: event.error,
        retryAt: isoTime(event.retryAt),
        attempts: event.attempts,
      };
    case 'discovered':
    case 'socket-removed':
      return { type: event.type, at, socketPath: event.socketPath };
    case 'lagged':
      return { type: event.type, at, dropped: event.dropped };
    case 'driver-unusable':
      return { type: event.type, at, plugin: { ...event.plugin }, since: isoTime(event.since) };
    case 'storage-error': {
      const view: EventView = { type: event.type, at, error: event.error };
      if (event.path !== undefined) view.path = event.path;
      return view;
    }
    case 'devices-changed':
      return {
        type: event.type,
        at,
        resource: event.resource,
        reason: event.reason,
        endpoint: event.endpoint ?? null,
        healthy: event.healthy,
        unhealthy: event.unhealthy,
        changed: [...event.changed],
      };
  }
}

/** A device allocation as the API shows it (/v1/devices...). */
export function deviceAllocationView(a: AllocationView): DeviceAllocationView {
  return { ...a, allocatedAt: isoTime(a.allocatedAt) };
}

/** A device plugin resource as the API shows it (/v1/devices...). */
export function deviceResourceView(r: ResourceView): DeviceResourceView {
  return {
    ...r,
    connectedAt: isoTime(r.connectedAt),
    disconnectedAt: isoTime(r.disconnectedAt),
    removeAt: isoTime(r.removeAt),
    allocations: r.allocations.map(deviceAllocationView),
  };
}

/** A CSI driver as the API shows it (GET /v1/csi/drivers). */
export function csiDriverView(d: CsiDriverView): CsiDriverStatusView {
  return { ...d, registeredAt: isoTime(d.registeredAt) };
}

/** A DRA driver as the API shows it (GET /v1/dra/drivers). */
export function draDriverView(d: DraDriverView): DraDriverStatusView {
  return {
    ...d,
    unusableSince: isoTime(d.unusableSince),
    instances: d.instances.map((i) => ({ ...i, registeredAt: isoTime(i.registeredAt) })),
  };
}
