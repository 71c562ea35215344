import type { PluginInstanceInfo } from '../common/index.js';

/** A deep copy, so nothing outside the registry holds a reference into its state. */
export function copyInfo(info: PluginInstanceInfo): PluginInstanceInfo {
  const copy: PluginInstanceInfo = {
    type: info.type,
    name: info.name,
    version: info.version,
    allocId: info.allocId,
    options: { ...info.options },
  };
  if (info.connectionInfo !== undefined) copy.connectionInfo = { socketPath: info.connectionInfo.socketPath };
  if (info.registeredAt !== undefined) copy.registeredAt = info.registeredAt;
  return copy;
}

/** True when re-registering `next` over `current` changes nothing a consumer could act on. */
export function sameDefinition(current: PluginInstanceInfo, next: PluginInstanceInfo): boolean {
  if (current.version !== next.version) return false;
  if (current.connectionInfo?.socketPath !== next.connectionInfo?.socketPath) return false;
  const a = Object.entries(current.options);
  if (a.length !== Object.keys(next.options).length) return false;
  return a.every(([key, value]) => Object.hasOwn(next.options, key) && next.options[key] === value);
}
