/**
 * CSI ephemeral inline volumes of pods, as the kubelet publishes them: for
 * each `spec.volumes[].csi`, NodePublishVolume only (no controller publish,
 * no stage), for the pod's uid as the workload, with a volume id of `csi-` +
 * hex sha256(podUID + volume name) and a volume context of the
 * volumeAttributes plus the kubelet's pod-info keys (the kubelet's keys win),
 * `csi.storage.k8s.io/ephemeral: "true"` among them. Deleting the pod
 * unpublishes them, and the driver frees their storage.
 *
 * The pod side sees only `PodVolumeHook`; the daemon, the composition root,
 * hands it to the pod registry.
 */
import { createHash } from 'node:crypto';
import { BerthError, errorMessage, type Logger } from '../common/index.js';
import type { PodVolumeView } from './types.js';
import type { VolumeManager } from './volume-manager.js';

/** A pod as JSON (the API's PodDocument); only metadata and spec.volumes are read. */
export interface InlineVolumePod {
  metadata: { name: string; namespace: string; uid: string };
  spec?: unknown;
}

export interface PodVolumeHook {
  /** Publishes every CSI inline volume of the pod; on a failure undoes the ones it published and throws. */
  publish(pod: InlineVolumePod): Promise<PodVolumeView[]>;
  /** Unpublishes every CSI inline volume of the pod (by its uid). */
  unpublish(pod: InlineVolumePod): Promise<void>;
}

interface InlineVolume {
  name: string;
  driver: string;
  readOnly: boolean;
  fsType: string | undefined;
  attributes: Record<string, string>;
}

/** The kubelet's makeVolumeHandle: `csi-` + lowercase hex sha256 of podUID and volume name, no separator. */
export function ephemeralVolumeId(podUid: string, volumeName: string): string {
  return `csi-${createHash('sha256')
    .update(podUid + volumeName)
    .digest('hex')}`;
}

function bad(message: string): BerthError {
  return new BerthError('BERTH_BAD_REQUEST', message);
}

/** The CSI inline volumes of a pod spec; a malformed `csi` entry is a 400 naming the field. */
export function inlineVolumesOf(pod: InlineVolumePod): InlineVolume[] {
  const spec = pod.spec as { volumes?: unknown } | undefined;
  const volumes = Array.isArray(spec?.volumes) ? (spec.volumes as unknown[]) : [];
  const out: InlineVolume[] = [];
  volumes.forEach((volume, index) => {
    const v = volume as { name?: unknown; csi?: unknown } | null;
    if (v === null || typeof v !== 'object' || v.csi === undefined || v.csi === null) return;
    const at = `spec.volumes[${index}]`;
    if (typeof v.name !== 'string' || v.name === '') throw bad(`${at}.name: required for a csi volume`);
    const csi = v.csi as {
      driver?: unknown;
      readOnly?: unknown;
      fsType?: unknown;
      volumeAttributes?: unknown;
    };
    if (typeof csi !== 'object') throw bad(`${at}.csi: expected an object`);
    if (typeof csi.driver !== 'string' || csi.driver === '') throw bad(`${at}.csi.driver: required`);
    if (csi.readOnly !== undefined && typeof csi.readOnly !== 'boolean') {
      throw bad(`${at}.csi.readOnly: expected true or false`);
    }
    if (csi.fsType !== undefined && typeof csi.fsType !== 'string')
      throw bad(`${at}.csi.fsType: expected a string`);
    const attributes: Record<string, string> = {};
    if (csi.volumeAttributes !== undefined && csi.volumeAttributes !== null) {
      if (typeof csi.volumeAttributes !== 'object' || Array.isArray(csi.volumeAttributes)) {
        throw bad(`${at}.csi.volumeAttributes: expected an object of strings`);
      }
      for (const [k, value] of Object.entries(csi.volumeAttributes)) {
        if (typeof value !== 'string') throw bad(`${at}.csi.volumeAttributes.${k}: expected a string`);
        attributes[k] = value;
      }
    }
    out.push({
      name: v.name,
      driver: csi.driver,
      readOnly: csi.readOnly === true,
      fsType: csi.fsType as string | undefined,
      attributes,
    });
  });
  return out;
}

export function createPodVolumeHook(manager: VolumeManager, logger: Logger): PodVolumeHook {
  const log = logger.child({ component: 'pod-volumes' });
  const unpublishAll = async (uid: string, volumes: Array<{ driver: string; volumeId: string }>) => {
    const failures: string[] = [];
    for (const { driver, volumeId } of volumes) {
      try {
        await manager.unpublish(driver, volumeId, uid);
      } catch (err) {
        failures.push(`${driver}/${volumeId}: ${errorMessage(err)}`);
      }
    }
    return failures;
  };
  return {
    async publish(pod) {
      const uid = pod.metadata.uid;
      const volumes = inlineVolumesOf(pod);
      const published: PodVolumeView[] = [];
      try {
        for (const volume of volumes) {
          const volumeId = ephemeralVolumeId(uid, volume.name);
          const result = await manager.publish(
            volume.driver,
            volumeId,
            {
              workload: uid,
              readOnly: volume.readOnly,
              accessMode: 'single-node-writer',
              ...(volume.fsType === undefined ? {} : { fsType: volume.fsType }),
              volumeContext: {
                ...volume.attributes,
                'csi.storage.k8s.io/pod.name': pod.metadata.name,
                'csi.storage.k8s.io/pod.namespace': pod.metadata.namespace,
                'csi.storage.k8s.io/pod.uid': uid,
                'csi.storage.k8s.io/ephemeral': 'true',
              },
            },
            true,
          );
          published.push({
            name: volume.name,
            driver: volume.driver,
            volumeId,
            targetPath: result.targetPath,
            readOnly: volume.readOnly,
          });
        }
      } catch (err) {
        const failures = await unpublishAll(uid, published);
        for (const failure of failures) {
          log.warn(
            { pod: pod.metadata.uid, failure },
            'undoing the inline volumes of a pod that failed to apply',
          );
        }
        throw err;
      }
      return published;
    },
    async unpublish(pod) {
      const uid = pod.metadata.uid;
      // What is recorded for this uid, not what the spec says now: nothing published is missed.
      const recorded = manager.publicationsOf(uid);
      const failures = await unpublishAll(uid, recorded);
      if (failures.length > 0) {
        throw new BerthError(
          'BERTH_CSI_DRIVER_UNAVAILABLE',
          `unpublishing the CSI inline volumes of pod ${pod.metadata.namespace}/${pod.metadata.name} failed (${failures.join('; ')}); they stay recorded, delete the pod again to retry`,
          { details: { retryAfterSeconds: 5 } },
        );
      }
    },
  };
}
