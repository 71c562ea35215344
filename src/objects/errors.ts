/**
 * The object manager's errors, with the kubelet's exact message texts (callers
 * and tests match on them). Each one is a BerthError with a stable code.
 */
import { BerthError, goQuote, isBerthError } from '../common/index.js';
import type { KubeObject } from './source.js';

/** `object "<ns>"/"<name>" not registered`: no registered pod references the object. */
export function notRegisteredError(namespace: string, name: string): BerthError {
  return new BerthError(
    'BERTH_OBJECT_NOT_REGISTERED',
    `object ${goQuote(namespace)}/${goQuote(name)} not registered`,
    { details: { namespace, name } },
  );
}

/** `failed to sync <groupResource> cache: timed out waiting for the condition` */
export function cacheSyncTimeoutError(groupResource: string): BerthError {
  return new BerthError(
    'BERTH_CACHE_SYNC_TIMEOUT',
    `failed to sync ${groupResource} cache: timed out waiting for the condition`,
    { details: { groupResource } },
  );
}

/**
 * Kubernetes' NotFound text, `<groupResource> "<name>" not found`. `object` is
 * what the source returned alongside the NotFound, if anything (the TTL store
 * caches it next to the error, as upstream does).
 */
export function notFoundError(groupResource: string, name: string, object?: KubeObject): BerthError {
  const details: Record<string, unknown> = { groupResource, name };
  if (object !== undefined) details.object = object;
  return new BerthError('BERTH_OBJECT_NOT_FOUND', `${groupResource} ${goQuote(name)} not found`, { details });
}

export function isNotFound(err: unknown): boolean {
  return isBerthError(err, 'BERTH_OBJECT_NOT_FOUND');
}

/** The object a NotFound error carries (see notFoundError), if any. */
export function objectOfNotFound(err: unknown): KubeObject | undefined {
  if (!isBerthError(err, 'BERTH_OBJECT_NOT_FOUND')) return undefined;
  const object = err.details.object;
  return isKubeObject(object) ? object : undefined;
}

/** `unexpected object type: <x>`; `<nil>` for a missing object, as Go's %v prints nil. */
export function unexpectedObjectTypeError(value: unknown): BerthError {
  return new BerthError('BERTH_UNEXPECTED_OBJECT_TYPE', `unexpected object type: ${describeValue(value)}`);
}

/** `unknown configmap and secret manager mode: <v>` */
export function unknownStrategyError(value: unknown): BerthError {
  return new BerthError(
    'BERTH_UNKNOWN_STRATEGY',
    `unknown configmap and secret manager mode: ${String(value)}`,
    { details: { strategy: String(value) } },
  );
}

/** The source's resource plural to the kubelet's groupResource text: secrets → secret. */
export function groupResourceOf(resource: 'secrets' | 'configmaps'): string {
  return resource === 'secrets' ? 'secret' : 'configmap';
}

/** A structural check: a non-null object whose metadata is an object with a string name. */
export function isKubeObject(value: unknown): value is KubeObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const metadata = (value as { metadata?: unknown }).metadata;
  return (
    typeof metadata === 'object' &&
    metadata !== null &&
    typeof (metadata as { name?: unknown }).name === 'string'
  );
}

function describeValue(value: unknown): string {
  if (value === undefined || value === null) return '<nil>';
  if (typeof value !== 'object') return `${typeof value} ${JSON.stringify(value) ?? String(value)}`;
  if (Array.isArray(value)) return 'array';
  const kind = (value as { kind?: unknown }).kind;
  const metadata = (value as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
  const kindText = typeof kind === 'string' && kind !== '' ? kind : 'object without kind';
  const name = typeof metadata?.name === 'string' ? metadata.name : undefined;
  if (name === undefined) return kindText;
  const ns = typeof metadata?.namespace === 'string' ? `${metadata.namespace}/` : '';
  return `${kindText} ${ns}${name}`;
}
