/**
 * Which secrets and configmaps a pod references: the kubelet's getSecretNames /
 * getConfigMapNames (podutil.VisitPodSecretNames / VisitPodConfigmapNames).
 * Volumes follow the upstream switch order, so a volume counts through its
 * first source kind only. References through PVCs/PVs are not followed.
 * Divergence: empty or non-string names are skipped (upstream would insert ""
 * for a malformed pod; the API server never lets one through).
 */
import type { Container, Pod } from './pod.js';

/** Secrets the pod references: pull secrets, env/envFrom in every container kind, volumes. */
export function getSecretNames(pod: Pod): Set<string> {
  const names = new Set<string>();
  const add = (name: unknown) => {
    if (typeof name === 'string' && name !== '') names.add(name);
  };
  const spec = pod.spec;
  for (const ref of spec?.imagePullSecrets ?? []) add(ref?.name);
  for (const container of allContainers(pod)) {
    for (const envFrom of container.envFrom ?? []) add(envFrom?.secretRef?.name);
    for (const env of container.env ?? []) add(env?.valueFrom?.secretKeyRef?.name);
  }
  for (const volume of spec?.volumes ?? []) {
    if (volume === null || typeof volume !== 'object') continue;
    if (volume.azureFile) add(volume.azureFile.secretName);
    else if (volume.cephfs) add(volume.cephfs.secretRef?.name);
    else if (volume.cinder) add(volume.cinder.secretRef?.name);
    else if (volume.flexVolume) add(volume.flexVolume.secretRef?.name);
    else if (volume.projected) {
      for (const source of volume.projected.sources ?? []) add(source?.secret?.name);
    } else if (volume.rbd) add(volume.rbd.secretRef?.name);
    else if (volume.secret) add(volume.secret.secretName);
    else if (volume.scaleIO) add(volume.scaleIO.secretRef?.name);
    else if (volume.iscsi) add(volume.iscsi.secretRef?.name);
    else if (volume.storageos) add(volume.storageos.secretRef?.name);
    else if (volume.csi) add(volume.csi.nodePublishSecretRef?.name);
  }
  return names;
}

/** ConfigMaps the pod references: env/envFrom in every container kind, configMap and projected volumes. */
export function getConfigMapNames(pod: Pod): Set<string> {
  const names = new Set<string>();
  const add = (name: unknown) => {
    if (typeof name === 'string' && name !== '') names.add(name);
  };
  for (const container of allContainers(pod)) {
    for (const envFrom of container.envFrom ?? []) add(envFrom?.configMapRef?.name);
    for (const env of container.env ?? []) add(env?.valueFrom?.configMapKeyRef?.name);
  }
  for (const volume of pod.spec?.volumes ?? []) {
    if (volume === null || typeof volume !== 'object') continue;
    if (volume.projected) {
      for (const source of volume.projected.sources ?? []) add(source?.configMap?.name);
    } else if (volume.configMap) add(volume.configMap.name);
  }
  return names;
}

/** Init, regular and ephemeral containers (podutil.AllContainers). */
function* allContainers(pod: Pod): Generator<Container> {
  const spec = pod.spec;
  for (const list of [spec?.initContainers, spec?.containers, spec?.ephemeralContainers]) {
    for (const container of list ?? []) {
      if (container !== null && typeof container === 'object') yield container;
    }
  }
}
