import type { PluginInfo } from './types.js';

/**
 * A shallow copy of a PluginInfo that shares nothing mutable with the original
 * (the handler is a reference on purpose: it is an object with behaviour, not data).
 * Both caches hand out copies so a caller cannot edit the cache by editing a result.
 */
export function clonePluginInfo(info: PluginInfo): PluginInfo {
  const copy: PluginInfo = { ...info };
  if (info.supportedVersions !== undefined) copy.supportedVersions = [...info.supportedVersions];
  return copy;
}
