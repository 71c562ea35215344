import { BerthError } from '../../common/index.js';
import type { PodDocument } from './api-types.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function bad(message: string): BerthError {
  return new BerthError('BERTH_BAD_REQUEST', message);
}

/**
 * Checks a PUT /v1/pods/{namespace}/{name} body: a Kubernetes Pod whose
 * metadata.uid is set and whose namespace/name agree with the path (a missing
 * metadata.namespace takes the path's). Errors name the offending field.
 */
export function validatePodDocument(body: unknown, namespace: string, name: string): PodDocument {
  if (!isRecord(body)) throw bad('body: expected a Pod object ({"metadata":{...},"spec":{...}})');
  const metadata = body.metadata;
  if (!isRecord(metadata)) throw bad('metadata: required (an object with name, namespace and uid)');
  if (typeof metadata.uid !== 'string' || metadata.uid === '') {
    throw bad('metadata.uid: required (a non-empty string identifying this pod instance)');
  }
  if (metadata.name !== undefined && metadata.name !== name) {
    throw bad(
      `metadata.name: ${JSON.stringify(metadata.name)} does not match the path's name ${JSON.stringify(name)}`,
    );
  }
  if (metadata.namespace !== undefined && metadata.namespace !== namespace) {
    throw bad(
      `metadata.namespace: ${JSON.stringify(metadata.namespace)} does not match the path's namespace ${JSON.stringify(namespace)}`,
    );
  }
  if (body.spec !== undefined) {
    if (!isRecord(body.spec)) throw bad('spec: expected an object');
    // The reference extractors walk these lists; anything else is a client mistake, not a crash.
    for (const list of [
      'containers',
      'initContainers',
      'ephemeralContainers',
      'volumes',
      'imagePullSecrets',
    ]) {
      const value = body.spec[list];
      if (value !== undefined && value !== null && !Array.isArray(value))
        throw bad(`spec.${list}: expected a list`);
    }
  }
  if (body.kind !== undefined && body.kind !== 'Pod') {
    throw bad(`kind: expected "Pod", got ${JSON.stringify(body.kind)}`);
  }
  return { ...body, metadata: { ...metadata, name, namespace, uid: metadata.uid } } as PodDocument;
}
