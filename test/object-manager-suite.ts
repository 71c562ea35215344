/**
 * The shared end-to-end suite for the object managers, run over every real
 * source (memory, directory, etcd; see object-manager-*.test.ts). It drives
 * createObjectManagers on real time, so it asserts only eventual states, with
 * generous waitFor deadlines, never timings.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { isBerthError } from '../src/common/index.js';
import {
  type ChangeDetectionStrategy,
  createObjectManagers,
  type KubeObject,
  type ObjectManagers,
  type ObjectManagersOptions,
  type ObjectResource,
  type ObjectSource,
  type Pod,
} from '../src/objects/index.js';
import { waitFor } from '../src/testing/index.js';

export interface SuiteSource {
  source: ObjectSource;
  /** Creates or replaces the object in the backing store. */
  put(resource: ObjectResource, obj: KubeObject): Promise<void>;
  remove(resource: ObjectResource, namespace: string, name: string): Promise<void>;
  /** Closes the source and removes everything the test created. */
  cleanup(): Promise<void>;
}

const EVENTUALLY = { timeoutMs: 20_000, intervalMs: 20 };

export function defineObjectManagerSuite(label: string, makeSource: () => Promise<SuiteSource>): void {
  describe(`object managers over the ${label} source`, () => {
    for (const strategy of ['Watch', 'Cache'] as const) {
      test(`${strategy}: a registered pod reads, sees edits, deletes and recreates, then lets go`, async () => {
        await withManagers(makeSource, { strategy, ttlMs: 100 }, async ({ env, managers, ns }) => {
          await env.put('secrets', secret(ns, 'env-secret', { token: 'v1' }));
          await env.put('secrets', secret(ns, 'pull-secret', { auth: 'p1' }));
          await env.put('secrets', secret(ns, 'unreferenced', { x: '1' }));
          await env.put('configmaps', configMap(ns, 'settings', { mode: 'a' }));
          const pod = podReferencing(ns, 'web', { envSecret: 'env-secret', pullSecret: 'pull-secret' });
          managers.registerPod(pod);

          await eventuallySecret(managers, ns, 'env-secret', { token: 'v1' });
          await eventuallySecret(managers, ns, 'pull-secret', { auth: 'p1' });
          await eventuallyConfigMap(managers, ns, 'settings', { mode: 'a' });
          await assertRejectsWith(
            managers.secrets.getSecret(ns, 'unreferenced'),
            'BERTH_OBJECT_NOT_REGISTERED',
          );
          assert.deepEqual(managers.stats().secrets.objects, 2);
          if (strategy === 'Watch') {
            await waitFor('two secret watches', () => managers.stats().secrets.watchesOpen === 2, EVENTUALLY);
          }

          // An edit in the source becomes visible.
          await env.put('secrets', secret(ns, 'env-secret', { token: 'v2' }));
          await env.put('configmaps', configMap(ns, 'settings', { mode: 'b' }));
          await eventuallySecret(managers, ns, 'env-secret', { token: 'v2' });
          await eventuallyConfigMap(managers, ns, 'settings', { mode: 'b' });

          // A delete becomes NotFound, a recreate becomes visible again.
          await env.remove('secrets', ns, 'env-secret');
          await waitFor(
            'env-secret not found',
            () => rejectsWith(managers.secrets.getSecret(ns, 'env-secret'), 'BERTH_OBJECT_NOT_FOUND'),
            EVENTUALLY,
          );
          const notFound = await managers.secrets.getSecret(ns, 'env-secret').catch((err: unknown) => err);
          assert.ok(isBerthError(notFound, 'BERTH_OBJECT_NOT_FOUND'));
          assert.match(notFound.message, /"env-secret" not found/);
          await env.put('secrets', secret(ns, 'env-secret', { token: 'v3' }));
          await eventuallySecret(managers, ns, 'env-secret', { token: 'v3' });

          // The pod updated to another pull secret: the old one is let go, the new one is served.
          await env.put('secrets', secret(ns, 'pull-secret-2', { auth: 'p2' }));
          managers.registerPod(
            podReferencing(ns, 'web', { envSecret: 'env-secret', pullSecret: 'pull-secret-2' }),
          );
          await assertRejectsWith(
            managers.secrets.getSecret(ns, 'pull-secret'),
            'BERTH_OBJECT_NOT_REGISTERED',
          );
          await eventuallySecret(managers, ns, 'pull-secret-2', { auth: 'p2' });

          // Unregistering lets go of everything at once.
          managers.unregisterPod(pod);
          await assertRejectsWith(
            managers.secrets.getSecret(ns, 'env-secret'),
            'BERTH_OBJECT_NOT_REGISTERED',
          );
          await assertRejectsWith(
            managers.configMaps.getConfigMap(ns, 'settings'),
            'BERTH_OBJECT_NOT_REGISTERED',
          );
          assert.deepEqual(managers.stats().secrets, { objects: 0, watchesOpen: 0 });
          assert.deepEqual(managers.pods(), []);
        });
      });
    }

    test('Watch: an immutable secret stops its watch and is served frozen', async () => {
      const options = { strategy: 'Watch' as const, immutableRecheckMs: 3_600_000 };
      await withManagers(makeSource, options, async ({ env, managers, ns }) => {
        await env.put('secrets', secret(ns, 'frozen', { v: '1' }, true));
        await env.put('secrets', secret(ns, 'sentinel', { v: '1' }));
        managers.registerPod(podReferencing(ns, 'app', { envSecret: 'frozen', pullSecret: 'sentinel' }));
        await eventuallySecret(managers, ns, 'frozen', { v: '1' });
        await eventuallySecret(managers, ns, 'sentinel', { v: '1' });
        await waitFor(
          'only the mutable secret is watched',
          () => managers.stats().secrets.watchesOpen === 1,
          EVENTUALLY,
        );

        // Change both in the source. Once the watched sentinel shows its change, the
        // frozen one has had every chance to change too, and must not have.
        await env.put('secrets', secret(ns, 'frozen', { v: '2' }, true));
        await env.put('secrets', secret(ns, 'sentinel', { v: '2' }));
        await eventuallySecret(managers, ns, 'sentinel', { v: '2' });
        assert.deepEqual(decoded(await managers.secrets.getSecret(ns, 'frozen')), { v: '1' });
      });
    });

    test('Watch: an immutable secret deleted and recreated under the same name is noticed', async () => {
      await withManagers(
        makeSource,
        { strategy: 'Watch', immutableRecheckMs: 200 },
        async ({ env, managers, ns }) => {
          // A second manager with the re-check disabled behaves like the kubelet (kubernetes#131589).
          const kubeletLike = createObjectManagers({
            strategy: 'Watch',
            source: env.source,
            syncTimeoutMs: 5_000,
            immutableRecheckMs: Number.POSITIVE_INFINITY,
          });
          try {
            await env.put('secrets', secret(ns, 'cert', { v: '1' }, true));
            const pod = podReferencing(ns, 'app', { envSecret: 'cert' });
            managers.registerPod(pod);
            kubeletLike.registerPod(pod);
            await eventuallySecret(managers, ns, 'cert', { v: '1' });
            await eventuallySecret(kubeletLike, ns, 'cert', { v: '1' });
            await waitFor(
              'frozen, not watched',
              () => managers.stats().secrets.watchesOpen === 0,
              EVENTUALLY,
            );

            await env.remove('secrets', ns, 'cert');
            await waitFor(
              'deleted immutable secret noticed',
              () => rejectsWith(managers.secrets.getSecret(ns, 'cert'), 'BERTH_OBJECT_NOT_FOUND'),
              EVENTUALLY,
            );
            await env.put('secrets', secret(ns, 'cert', { v: '2' }, true));
            await eventuallySecret(managers, ns, 'cert', { v: '2' });

            // The source has served v2 to the first manager; the kubelet-like one is still stuck on v1.
            assert.deepEqual(decoded(await kubeletLike.secrets.getSecret(ns, 'cert')), { v: '1' });
          } finally {
            await kubeletLike.stop();
          }
        },
      );
    });

    test('Get: reads go straight to the source, registration is not needed', async () => {
      await withManagers(makeSource, { strategy: 'Get' }, async ({ env, managers, ns }) => {
        await env.put('configmaps', configMap(ns, 'direct', { k: '1' }));
        await eventuallyConfigMap(managers, ns, 'direct', { k: '1' });
        await env.put('configmaps', configMap(ns, 'direct', { k: '2' }));
        await eventuallyConfigMap(managers, ns, 'direct', { k: '2' });
        await waitFor(
          'missing configmap is NotFound',
          () => rejectsWith(managers.configMaps.getConfigMap(ns, 'absent'), 'BERTH_OBJECT_NOT_FOUND'),
          EVENTUALLY,
        );
      });
    });
  });
}

interface Fixture {
  env: SuiteSource;
  managers: ObjectManagers;
  ns: string;
}

async function withManagers(
  makeSource: () => Promise<SuiteSource>,
  options: Omit<ObjectManagersOptions, 'source' | 'strategy'> & { strategy: ChangeDetectionStrategy },
  body: (fixture: Fixture) => Promise<void>,
): Promise<void> {
  const env = await makeSource();
  try {
    const managers = createObjectManagers({ syncTimeoutMs: 5_000, ...options, source: env.source });
    managers.start();
    try {
      await body({ env, managers, ns: `ns-${randomUUID().slice(0, 8)}` });
    } finally {
      await managers.stop();
    }
  } finally {
    await env.cleanup();
  }
}

function secret(
  namespace: string,
  name: string,
  data: Record<string, string>,
  immutable = false,
): KubeObject {
  const encoded = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  );
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'Opaque',
    data: encoded,
    ...(immutable ? { immutable: true } : {}),
  };
}

function configMap(namespace: string, name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

/** A pod naming an env secret, optionally a pull secret, and always the configmap "settings" as a volume. */
function podReferencing(
  namespace: string,
  name: string,
  refs: { envSecret: string; pullSecret?: string },
): Pod {
  return {
    metadata: { namespace, name, uid: `uid-${namespace}-${name}` },
    spec: {
      ...(refs.pullSecret === undefined ? {} : { imagePullSecrets: [{ name: refs.pullSecret }] }),
      containers: [
        {
          name: 'main',
          env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: refs.envSecret, key: 'token' } } }],
        },
      ],
      volumes: [{ name: 'config', configMap: { name: 'settings' } }],
    },
  };
}

function decoded(object: KubeObject): Record<string, string> {
  return Object.fromEntries(
    Object.entries(object.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
}

async function eventuallySecret(
  managers: ObjectManagers,
  ns: string,
  name: string,
  data: Record<string, string>,
) {
  await waitFor(
    `secret ${ns}/${name} = ${JSON.stringify(data)}`,
    async () => isDeepStrictEqual(decoded(await managers.secrets.getSecret(ns, name)), data),
    EVENTUALLY,
  );
}

async function eventuallyConfigMap(
  managers: ObjectManagers,
  ns: string,
  name: string,
  data: Record<string, string>,
) {
  await waitFor(
    `configmap ${ns}/${name} = ${JSON.stringify(data)}`,
    async () => isDeepStrictEqual((await managers.configMaps.getConfigMap(ns, name)).data ?? {}, data),
    EVENTUALLY,
  );
}

/** True when the promise rejects with the code (for waitFor); false otherwise. */
async function rejectsWith(promise: Promise<unknown>, code: string): Promise<boolean> {
  try {
    await promise;
    return false;
  } catch (err) {
    return isBerthError(err) && err.code === code;
  }
}

async function assertRejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => isBerthError(err) && err.code === code);
}
