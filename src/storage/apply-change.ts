import type { PluginInstanceInfo } from '../common/index.js';
import { setOwn } from './own-record.js';
import type { RegistryChange, RegistryState } from './types.js';

/**
 * Applies one change to a whole state in place, with the same meaning the
 * SQLite rows give it (the memory storage's write path).
 */
export function applyChange(state: RegistryState, change: RegistryChange): void {
  if (change.op === 'delete') {
    const byName = own(state.plugins, change.type);
    const list = byName === undefined ? undefined : own(byName, change.name);
    if (byName === undefined || list === undefined) return;
    const index = list.findIndex((i) => i.allocId === change.allocId);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) delete byName[change.name];
    return;
  }
  const info: PluginInstanceInfo = JSON.parse(JSON.stringify(change.info));
  let byName = own(state.plugins, info.type);
  if (byName === undefined) {
    byName = {};
    setOwn(state.plugins, info.type, byName);
  }
  let list = own(byName, info.name);
  if (list === undefined) {
    list = [];
    setOwn(byName, info.name, list);
  }
  const index = list.findIndex((i) => i.allocId === info.allocId);
  if (index >= 0 && !change.front) {
    list[index] = info;
    return;
  }
  if (index >= 0) list.splice(index, 1);
  list.unshift(info);
}

function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
