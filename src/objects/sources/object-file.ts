/**
 * Parsing one object file of the directory source:
 * `<root>/<resource>/<namespace>/<name>.json|.yaml|.yml` holding a Kubernetes
 * Secret or ConfigMap. The path is the identity: metadata.name/namespace are
 * filled from it when missing and must match it when present. kind must be
 * the resource's (Secret under secrets/, ConfigMap under configmaps/);
 * apiVersion defaults to v1. A Secret's data must be base64. A Secret's stringData is folded into data as
 * base64, as the API server does on write.
 */
import { basename, extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { KubeObject, ObjectResource } from '../source.js';

export const OBJECT_FILE_EXTENSIONS = ['.json', '.yaml', '.yml'] as const;

/** Largest object file read: 1 MiB, the most Kubernetes stores for one Secret or ConfigMap. */
export const OBJECT_FILE_MAX_BYTES = 1024 * 1024;

/** Standard base64 as the API server requires for Secret data (padding included). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const KIND_OF: Record<ObjectResource, string> = { secrets: 'Secret', configmaps: 'ConfigMap' };

export function isObjectFileName(fileName: string): boolean {
  if (fileName.startsWith('.')) return false;
  const ext = extname(fileName);
  return (OBJECT_FILE_EXTENSIONS as readonly string[]).includes(ext) && fileName.length > ext.length;
}

/** The object name a file stands for: its name without the extension. */
export function objectNameOfFile(fileName: string): string {
  return basename(fileName, extname(fileName));
}

export type ParsedObjectFile = { ok: true; object: KubeObject } | { ok: false; error: string };

export function parseObjectFile(
  resource: ObjectResource,
  namespace: string,
  fileName: string,
  text: string,
): ParsedObjectFile {
  const name = objectNameOfFile(fileName);
  let value: unknown;
  try {
    if (text.trim() === '') return { ok: false, error: 'the file is empty' };
    value = extname(fileName) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    return { ok: false, error: `cannot parse: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (!isRecord(value)) return { ok: false, error: 'expected an object (kind, metadata, data, ...)' };
  const object = structuredClone(value);

  const metadataValue = object.metadata ?? {};
  if (!isRecord(metadataValue)) return { ok: false, error: 'metadata must be an object' };
  const metadata = metadataValue;
  if (metadata.name === undefined) metadata.name = name;
  else if (metadata.name !== name) {
    return {
      ok: false,
      error: `metadata.name ${JSON.stringify(metadata.name)} does not match the file name ${JSON.stringify(name)}`,
    };
  }
  if (metadata.namespace === undefined) metadata.namespace = namespace;
  else if (metadata.namespace !== namespace) {
    return {
      ok: false,
      error: `metadata.namespace ${JSON.stringify(metadata.namespace)} does not match the directory ${JSON.stringify(namespace)}`,
    };
  }
  // The source assigns versions; a stale one copied into a file means nothing.
  delete metadata.resourceVersion;
  object.metadata = metadata;

  const kind = KIND_OF[resource];
  if (object.kind === undefined) {
    // A mapping without kind could be anything; under secrets/ it must not become a Secret by default.
    return { ok: false, error: `kind is missing; an object under ${resource}/ says kind: ${kind}` };
  }
  if (object.kind !== kind) {
    return {
      ok: false,
      error: `kind ${JSON.stringify(object.kind)} does not belong under ${resource}/ (expected ${kind})`,
    };
  }
  if (object.apiVersion === undefined) object.apiVersion = 'v1';

  if (object.immutable !== undefined && typeof object.immutable !== 'boolean') {
    return { ok: false, error: 'immutable must be true or false' };
  }
  for (const field of ['data', 'stringData', 'binaryData'] as const) {
    const map = object[field];
    if (map !== undefined && map !== null && !isStringMap(map)) {
      return { ok: false, error: `${field} must map keys to strings` };
    }
  }
  if (resource === 'secrets' && isStringMap(object.data)) {
    for (const [key, encoded] of Object.entries(object.data)) {
      if (!BASE64.test(encoded)) {
        return {
          ok: false,
          error: `data.${key} is not base64; put plain text under stringData, or encode it (base64 -w0)`,
        };
      }
    }
  }
  if (resource === 'secrets' && isStringMap(object.stringData)) {
    const data: Record<string, string> = isStringMap(object.data) ? { ...object.data } : {};
    for (const [key, plain] of Object.entries(object.stringData))
      data[key] = Buffer.from(plain).toString('base64');
    object.data = data;
    delete object.stringData;
  }
  return { ok: true, object: object as KubeObject };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringMap(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string');
}
