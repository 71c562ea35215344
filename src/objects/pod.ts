/**
 * The parts of a Kubernetes Pod (v1, JSON form) the object manager reads:
 * identity, and where a pod spec names secrets and configmaps. Everything is
 * optional because pods arrive as JSON from callers; validatePod checks the
 * identity the manager keys on.
 */
import { BerthError } from '../common/index.js';
import type { PodKey } from './object-key.js';

export interface LocalObjectReference {
  name?: string;
}

export interface EnvFromSource {
  configMapRef?: LocalObjectReference | null;
  secretRef?: LocalObjectReference | null;
  prefix?: string;
}

export interface EnvVar {
  name?: string;
  value?: string;
  valueFrom?: {
    configMapKeyRef?: (LocalObjectReference & { key?: string; optional?: boolean }) | null;
    secretKeyRef?: (LocalObjectReference & { key?: string; optional?: boolean }) | null;
    [key: string]: unknown;
  } | null;
}

export interface Container {
  name?: string;
  env?: EnvVar[] | null;
  envFrom?: EnvFromSource[] | null;
  [key: string]: unknown;
}

export interface VolumeProjection {
  secret?: LocalObjectReference | null;
  configMap?: LocalObjectReference | null;
  [key: string]: unknown;
}

/** A volume: exactly one source field is set, as in the Kubernetes API. */
export interface Volume {
  name?: string;
  azureFile?: { secretName?: string } | null;
  cephfs?: { secretRef?: LocalObjectReference | null } | null;
  cinder?: { secretRef?: LocalObjectReference | null } | null;
  flexVolume?: { secretRef?: LocalObjectReference | null } | null;
  projected?: { sources?: VolumeProjection[] | null } | null;
  rbd?: { secretRef?: LocalObjectReference | null } | null;
  secret?: { secretName?: string } | null;
  scaleIO?: { secretRef?: LocalObjectReference | null } | null;
  iscsi?: { secretRef?: LocalObjectReference | null } | null;
  storageos?: { secretRef?: LocalObjectReference | null } | null;
  csi?: { nodePublishSecretRef?: LocalObjectReference | null } | null;
  configMap?: LocalObjectReference | null;
  [key: string]: unknown;
}

export interface PodSpec {
  imagePullSecrets?: LocalObjectReference[] | null;
  initContainers?: Container[] | null;
  containers?: Container[] | null;
  ephemeralContainers?: Container[] | null;
  volumes?: Volume[] | null;
  [key: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; [key: string]: unknown };
  spec?: PodSpec;
  [key: string]: unknown;
}

/** The pod's (namespace, name, uid), or BERTH_INVALID_ARGUMENT naming the missing field. */
export function validatePod(pod: unknown): PodKey {
  if (typeof pod !== 'object' || pod === null || Array.isArray(pod)) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'pod must be an object');
  }
  const metadata = (pod as Pod).metadata;
  if (typeof metadata !== 'object' || metadata === null) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'pod metadata is missing', {
      details: { field: 'metadata' },
    });
  }
  const field = (key: 'namespace' | 'name' | 'uid'): string => {
    const value = metadata[key];
    if (typeof value !== 'string' || value === '') {
      throw new BerthError('BERTH_INVALID_ARGUMENT', `pod metadata.${key} is missing or empty`, {
        details: { field: `metadata.${key}` },
      });
    }
    return value;
  };
  return { namespace: field('namespace'), name: field('name'), uid: field('uid') };
}
