/**
 * Fixtures for object manager tests:
 * the upstream podWithSecrets helper, objects, and a counting memory source.
 */
import { createMemorySource, type KubeObject, type MemorySource, type Pod } from '../objects/index.js';
import { type CountingSource, countingSource } from './counting-source.js';

export interface EnvSecrets {
  envVarNames?: string[];
  envFromNames?: string[];
}

export interface SecretsToAttach {
  imagePullSecretNames?: string[];
  containerEnvSecrets?: EnvSecrets[];
}

/** Upstream's podWithSecrets; the uid is derived from (ns, name) so re-registering is "the same pod". */
export function podWithSecrets(namespace: string, name: string, attach: SecretsToAttach, uid?: string): Pod {
  return {
    metadata: { namespace, name, uid: uid ?? `uid-${namespace}-${name}` },
    spec: {
      imagePullSecrets: (attach.imagePullSecretNames ?? []).map((n) => ({ name: n })),
      containers: (attach.containerEnvSecrets ?? []).map((env, i) => ({
        name: `container-${i}`,
        envFrom: (env.envFromNames ?? []).map((n) => ({ secretRef: { name: n } })),
        env: (env.envVarNames ?? []).map((n) => ({
          name: `E_${n}`,
          valueFrom: { secretKeyRef: { name: n, key: 'k' } },
        })),
      })),
    },
  };
}

export function secret(namespace: string, name: string, extra: Partial<KubeObject> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name }, data: {}, ...extra };
}

export function configMap(namespace: string, name: string, extra: Partial<KubeObject> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name }, data: {}, ...extra };
}

/** A memory source holding a secret for every (namespace, name), behind an action recorder. */
export function countedSecrets(
  namespaces: string[],
  names: string[],
): { memory: MemorySource; source: CountingSource } {
  const memory = createMemorySource();
  for (const ns of namespaces) for (const name of names) memory.put('secrets', secret(ns, name));
  return { memory, source: countingSource(memory) };
}
