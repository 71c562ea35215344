import type { PluginInstanceInfo } from '../common/index.js';

/** The node key's value: who holds the node name, under which lease. */
export interface NodeRecord {
  node: string;
  /** Stable id of the daemon installation (kept in its data dir); a restart keeps it. */
  instance: string;
  /** The lease of the current run, decimal. Changes on every start and re-grant. */
  lease: string;
  /** When this run started publishing (ms since the epoch). */
  startedAt: number;
  daemon: string;
}

export type HealthState = 'healthy' | 'unhealthy' | 'unknown';

/**
 * A plugin key's value: the instance's facts. It deliberately carries nothing
 * about the writer's run (no lease, no instance), so a restart's re-put writes
 * an identical value and readers see no change.
 */
export interface PluginRecord {
  node: string;
  type: string;
  name: string;
  versions: string[];
  endpoint: string;
  instanceId: string;
  health: { state: HealthState; message?: string };
  /** What the type's handler recorded on the instance (the registry instance's `options`). */
  facts: Record<string, string>;
}

/**
 * Health as the registry knows it: a registered instance is healthy unless its
 * handler said otherwise in `options.health` ("healthy"/"unhealthy"), with an
 * optional `options.healthMessage`. A change of either arrives as an `updated`
 * registry event and becomes exactly one put.
 */
export function healthOf(info: PluginInstanceInfo): PluginRecord['health'] {
  const raw = info.options.health;
  const state: HealthState =
    raw === undefined || raw === 'healthy' ? 'healthy' : raw === 'unhealthy' ? 'unhealthy' : 'unknown';
  const message = info.options.healthMessage;
  return message === undefined ? { state } : { state, message };
}

/** The published facts of one registry instance (registeredAt is left out: a restart must not change the value). */
export function pluginRecord(node: string, info: PluginInstanceInfo): PluginRecord {
  // The kubelet bridge keeps every supported version in options.versions; `version` is the chosen one.
  const listed = info.options.versions ?? info.version;
  return {
    node,
    type: info.type,
    name: info.name,
    versions: listed === '' ? [] : listed.split(',').map((v) => v.trim()),
    endpoint: info.connectionInfo?.socketPath ?? '',
    instanceId: info.allocId,
    health: healthOf(info),
    facts: { ...info.options },
  };
}

/** JSON with sorted object keys, so equal records always encode to equal bytes. */
export function encodeRecord(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  });
}

export function decodeRecord<T>(text: string): T | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}
