import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from './pod.js';
import { getConfigMapNames, getSecretNames } from './references.js';

const sorted = (set: Set<string>) => [...set].sort();

describe('reference extractors', () => {
  test('secrets: pull secrets, env and envFrom in every container kind, every secret volume kind', () => {
    const pod: Pod = {
      metadata: { namespace: 'ns', name: 'p', uid: 'u' },
      spec: {
        imagePullSecrets: [{ name: 'pull' }, { name: 'pull' }],
        initContainers: [{ envFrom: [{ secretRef: { name: 'init-envfrom' } }] }],
        containers: [
          {
            env: [
              { name: 'A', valueFrom: { secretKeyRef: { name: 'env', key: 'k' } } },
              { name: 'B', valueFrom: { configMapKeyRef: { name: 'not-a-secret', key: 'k' } } },
              { name: 'C', value: 'plain' },
            ],
            envFrom: [{ configMapRef: { name: 'not-a-secret-either' } }],
          },
        ],
        ephemeralContainers: [{ env: [{ name: 'D', valueFrom: { secretKeyRef: { name: 'ephemeral' } } }] }],
        volumes: [
          { name: 'v1', azureFile: { secretName: 'azure' } },
          { name: 'v2', azureFile: { secretName: '' } },
          { name: 'v3', cephfs: { secretRef: { name: 'ceph' } } },
          { name: 'v4', cinder: { secretRef: { name: 'cinder' } } },
          { name: 'v5', flexVolume: { secretRef: { name: 'flex' } } },
          {
            name: 'v6',
            projected: { sources: [{ secret: { name: 'projected' } }, { configMap: { name: 'pcm' } }] },
          },
          { name: 'v7', rbd: { secretRef: { name: 'rbd' } } },
          { name: 'v8', secret: { secretName: 'secret-volume' } },
          { name: 'v9', scaleIO: { secretRef: { name: 'scaleio' } } },
          { name: 'v10', iscsi: { secretRef: { name: 'iscsi' } } },
          { name: 'v11', storageos: { secretRef: { name: 'storageos' } } },
          { name: 'v12', csi: { nodePublishSecretRef: { name: 'csi' } } },
          { name: 'v13', cephfs: {} },
          { name: 'v14', configMap: { name: 'cm' } },
          { name: 'v15', persistentVolumeClaim: { claimName: 'pvc' } },
        ],
      },
    };
    assert.deepEqual(sorted(getSecretNames(pod)), [
      'azure',
      'ceph',
      'cinder',
      'csi',
      'env',
      'ephemeral',
      'flex',
      'init-envfrom',
      'iscsi',
      'projected',
      'pull',
      'rbd',
      'scaleio',
      'secret-volume',
      'storageos',
    ]);
  });

  test('configmaps: env and envFrom in every container kind, configMap and projected volumes', () => {
    const pod: Pod = {
      metadata: { namespace: 'ns', name: 'p', uid: 'u' },
      spec: {
        imagePullSecrets: [{ name: 'pull' }],
        initContainers: [{ env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'init-env' } } }] }],
        containers: [
          {
            envFrom: [{ configMapRef: { name: 'envfrom' } }, { secretRef: { name: 'secret' } }],
            env: [{ name: 'B', valueFrom: { configMapKeyRef: { name: 'env' } } }],
          },
        ],
        ephemeralContainers: [{ envFrom: [{ configMapRef: { name: 'ephemeral' } }] }],
        volumes: [
          { name: 'v1', configMap: { name: 'volume' } },
          {
            name: 'v2',
            projected: { sources: [{ configMap: { name: 'projected' } }, { secret: { name: 's' } }, {}] },
          },
          { name: 'v3', secret: { secretName: 'secret-volume' } },
        ],
      },
    };
    assert.deepEqual(sorted(getConfigMapNames(pod)), [
      'env',
      'envfrom',
      'ephemeral',
      'init-env',
      'projected',
      'volume',
    ]);
  });

  test('a pod without a spec, or with nulls where lists go, references nothing', () => {
    assert.deepEqual(sorted(getSecretNames({ metadata: { namespace: 'n', name: 'p', uid: 'u' } })), []);
    const sparse = {
      spec: { containers: null, volumes: [null, { secret: null }], imagePullSecrets: [{}] },
    } as unknown as Pod;
    assert.deepEqual(sorted(getSecretNames(sparse)), []);
    assert.deepEqual(sorted(getConfigMapNames(sparse)), []);
  });
});
