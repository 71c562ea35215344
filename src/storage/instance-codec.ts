import { BerthError, errorMessage, type PluginInstanceInfo } from '../common/index.js';
import { CorruptStateError } from './corrupt-state-error.js';

/** The columns an instance row is keyed by; the JSON must agree with them. */
export interface InstanceKey {
  type: string;
  name: string;
  allocId: string;
}

export function encodeInstance(info: PluginInstanceInfo): string {
  return JSON.stringify(info);
}

/**
 * Parses and checks one stored instance. Every field is checked, so a row
 * that was damaged or written by something else is reported as corrupt
 * instead of reaching the registry half-formed.
 */
export function decodeInstance(json: string, key: InstanceKey): PluginInstanceInfo {
  const where = `instance ${JSON.stringify(key.allocId)} of plugin ${JSON.stringify(key.name)} (type ${JSON.stringify(key.type)})`;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new CorruptStateError(`${where}: stored JSON does not parse: ${(err as Error).message}`);
  }
  if (!isRecord(value)) throw new CorruptStateError(`${where}: stored value is not an object`);
  const fail = (what: string): never => {
    throw new CorruptStateError(`${where}: ${what}`);
  };
  if (value.type !== key.type) fail(`type ${JSON.stringify(value.type)} does not match its row`);
  if (value.name !== key.name) fail(`name ${JSON.stringify(value.name)} does not match its row`);
  if (value.allocId !== key.allocId) fail(`allocId ${JSON.stringify(value.allocId)} does not match its row`);
  if (typeof value.version !== 'string') fail('version is not a string');
  const options = value.options;
  if (!isRecord(options) || !Object.values(options).every((v) => typeof v === 'string')) {
    fail('options is not a map of strings');
  }
  const info: PluginInstanceInfo = {
    type: key.type,
    name: key.name,
    version: value.version as string,
    allocId: key.allocId,
    options: { ...(options as Record<string, string>) },
  };
  if (value.connectionInfo !== undefined) {
    const ci = value.connectionInfo;
    if (!isRecord(ci) || typeof ci.socketPath !== 'string') fail('connectionInfo.socketPath is not a string');
    info.connectionInfo = { socketPath: (ci as { socketPath: string }).socketPath };
  }
  if (value.registeredAt !== undefined) {
    if (typeof value.registeredAt !== 'number' || !Number.isFinite(value.registeredAt)) {
      fail('registeredAt is not a number');
    }
    info.registeredAt = value.registeredAt as number;
  }
  return info;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Encodes one instance and reads it back, so a store never holds what it
 * could not restore. Throws BERTH_INVALID_ARGUMENT naming what is wrong.
 */
export function encodeCheckedInstance(info: PluginInstanceInfo): string {
  if (typeof info !== 'object' || info === null || typeof info.allocId !== 'string') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'cannot store a plugin instance without an allocId');
  }
  const json = encodeInstance(info);
  try {
    decodeInstance(json, { type: info.type, name: info.name, allocId: info.allocId });
  } catch (err) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `cannot store registry state: ${errorMessage(err)}`);
  }
  return json;
}
