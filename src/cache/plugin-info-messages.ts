import { BerthError } from '../common/index.js';
import type { PluginInfo } from './types.js';

/*
 * Log and error text helpers for a PluginInfo (the kubelet keeps these as
 * methods on its PluginInfo). Every message reads "<prefix> <plugin> <suffix>":
 * the simple form names only the socket, for events and users; the detailed
 * form adds everything known about the plugin, for logs.
 */

function whereAt(info: PluginInfo): string {
  return `for plugin at ${JSON.stringify(info.socketPath)}`;
}

function details(info: PluginInfo): string {
  const parts: string[] = [];
  if (info.type !== undefined) parts.push(`type=${JSON.stringify(info.type)}`);
  if (info.name !== undefined) parts.push(`name=${JSON.stringify(info.name)}`);
  if (info.endpoint !== undefined) parts.push(`endpoint=${JSON.stringify(info.endpoint)}`);
  if (info.supportedVersions !== undefined) parts.push(`versions=[${info.supportedVersions.join(',')}]`);
  parts.push(`uuid=${info.uuid}`);
  parts.push(`timestamp=${formatTimestamp(info.timestamp)}`);
  if (info.foundInDeprecatedDir) parts.push('foundInDeprecatedDir=true');
  return `(plugin details: ${parts.join(' ')})`;
}

function formatTimestamp(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms);
}

function joinParts(...parts: string[]): string {
  return parts.filter((part) => part !== '').join(' ');
}

/** The detailed message, for logs: prefix, socket, every known detail, suffix. */
export function generateMsgDetailed(info: PluginInfo, prefix: string, suffix: string): string {
  return joinParts(prefix, whereAt(info), details(info), suffix);
}

/** [simple, detailed]: the simple one names only the socket (for events and users), the detailed one is for logs. */
export function generateMsg(info: PluginInfo, prefix: string, suffix: string): [string, string] {
  return [joinParts(prefix, whereAt(info), suffix), generateMsgDetailed(info, prefix, suffix)];
}

/** The detailed message with the cause appended as ": <cause>" (nothing when there is no cause). */
export function generateErrorDetailed(info: PluginInfo, prefix: string, err?: unknown): Error {
  return wrap(`${generateMsgDetailed(info, prefix, '')}${causeSuffix(err)}`, err);
}

/** [simple, detailed] errors, both carrying `err` as their cause. */
export function generateError(info: PluginInfo, prefix: string, err?: unknown): [Error, Error] {
  const [simple, detailed] = generateMsg(info, prefix, '');
  const suffix = causeSuffix(err);
  return [wrap(`${simple}${suffix}`, err), wrap(`${detailed}${suffix}`, err)];
}

function causeSuffix(err: unknown): string {
  if (err === undefined || err === null) return '';
  return `: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * A BerthError cause keeps its code and details, so callers that branch on
 * codes (the API, the executor's backoff) see through the added context.
 */
function wrap(message: string, cause: unknown): Error {
  if (cause instanceof BerthError)
    return new BerthError(cause.code, message, { cause, details: cause.details });
  return cause === undefined || cause === null ? new Error(message) : new Error(message, { cause });
}
