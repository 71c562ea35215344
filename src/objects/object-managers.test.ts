import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { configMap, countingSource, FakeClock, secret, waitFor } from '../testing/index.js';
import { createCacheBasedManager } from './manager.js';
import {
  createConfigMapManager,
  createObjectManagers,
  createSecretManager,
  createSimpleManager,
} from './object-managers.js';
import { DEFAULT_CHANGE_DETECTION_STRATEGY } from './objects-options.js';
import type { Pod } from './pod.js';
import { getConfigMapNames } from './references.js';
import type { KubeObject } from './source.js';
import { createMemorySource } from './sources/memory-source.js';
import { createTtlStore } from './ttl-store.js';

/** A pod with configmaps as env (configMapKeyRef), envFrom and a volume. */
function podWithConfigMaps(
  ns: string,
  name: string,
  refs: { env?: string[]; envFrom?: string[]; volumes?: string[] },
): Pod {
  return {
    metadata: { namespace: ns, name, uid: `uid-${ns}-${name}` },
    spec: {
      containers: [
        {
          env: (refs.env ?? []).map((n) => ({
            name: `E_${n}`,
            valueFrom: { configMapKeyRef: { name: n, key: 'k' } },
          })),
          envFrom: (refs.envFrom ?? []).map((n) => ({ configMapRef: { name: n } })),
        },
      ],
      volumes: (refs.volumes ?? []).map((n) => ({ name: `v-${n}`, configMap: { name: n } })),
    },
  };
}

describe('configmap and secret managers (upstream configmap/secret package tests)', () => {
  test('configmap manager end to end: only the current references exist', async () => {
    const memory = createMemorySource();
    for (const ns of ['ns1', 'ns2', 'ns3']) {
      for (const name of ['s1', 's2', 's3', 's4', 's5', 's6', 's20', 's40', 's50', 's60'])
        memory.put('configmaps', configMap(ns, name));
    }
    const store = createTtlStore({
      getObject: (ns, name, options) => memory.get('configmaps', ns, name, options),
      clock: new FakeClock(),
      defaultTtlMs: 0,
    });
    const manager = createConfigMapManager(
      createCacheBasedManager({ store, getReferencedObjects: getConfigMapNames }),
    );
    const first = { env: ['s1'], envFrom: ['s20'], volumes: ['s2'] };
    manager.registerPod(podWithConfigMaps('ns1', 'name1', first));
    manager.registerPod(podWithConfigMaps('ns2', 'name2', first));
    manager.registerPod(podWithConfigMaps('ns2', 'name2', { env: ['s3', 's4'], envFrom: ['s40'] }));
    manager.registerPod(podWithConfigMaps('ns3', 'name', { env: ['s6'], envFrom: ['s60'] }));
    manager.unregisterPod(podWithConfigMaps('ns3', 'name', { env: ['s6'], envFrom: ['s60'] }));
    const expected: Record<string, string[]> = { ns1: ['s1', 's2', 's20'], ns2: ['s3', 's4', 's40'] };
    for (const ns of ['ns1', 'ns2', 'ns3']) {
      for (const name of ['s1', 's2', 's3', 's4', 's5', 's6', 's20', 's40', 's50']) {
        const shouldExist = expected[ns]?.includes(name) ?? false;
        if (shouldExist) {
          assert.equal((await manager.getConfigMap(ns, name)).metadata.name, name);
        } else {
          await assert.rejects(
            manager.getConfigMap(ns, name),
            new RegExp(`object "${ns}"/"${name}" not registered`),
          );
        }
      }
    }
  });

  test('the simple (Get) manager reads through; register and unregister do nothing', async () => {
    const memory = createMemorySource();
    const source = countingSource(memory);
    memory.put('secrets', secret('ns', 'a'));
    const manager = createSecretManager(createSimpleManager(source, 'secrets'));
    manager.registerPod({ metadata: {} }); // not even validated: it is a no-op
    manager.unregisterPod({ metadata: {} });
    await manager.getSecret('ns', 'a');
    await manager.getSecret('ns', 'a');
    assert.equal(source.count('get', 'secrets'), 2);
    await assert.rejects(manager.getSecret('ns', 'missing'), (err: unknown) =>
      isBerthError(err, 'BERTH_OBJECT_NOT_FOUND'),
    );
  });

  test('a wrong kind or a non-object is "unexpected object type"; store errors pass through', async () => {
    const answers: unknown[] = [configMap('ns', 'a'), undefined, 'text', secret('ns', 'a')];
    const fake = {
      getObject: async () => {
        const next = answers.shift();
        if (next === 'fail') throw new Error('store failed');
        return next as KubeObject;
      },
      registerPod: () => {},
      unregisterPod: () => {},
    };
    const secrets = createSecretManager(fake);
    await assert.rejects(secrets.getSecret('ns', 'a'), (err: unknown) => {
      assert.ok(isBerthError(err, 'BERTH_UNEXPECTED_OBJECT_TYPE'));
      assert.match(err.message, /^unexpected object type: ConfigMap ns\/a$/);
      return true;
    });
    await assert.rejects(secrets.getSecret('ns', 'a'), /^BerthError: unexpected object type: <nil>$/);
    await assert.rejects(secrets.getSecret('ns', 'a'), /unexpected object type: string "text"/);
    assert.equal((await secrets.getSecret('ns', 'a')).kind, 'Secret');
    answers.push('fail');
    await assert.rejects(secrets.getSecret('ns', 'a'), /store failed/);
    // A missing kind is accepted (list items carry none).
    answers.push({ metadata: { name: 'a' } });
    assert.equal((await createConfigMapManager(fake).getConfigMap('ns', 'a')).metadata.name, 'a');
  });

  test('register and unregister delegate to the underlying manager', () => {
    const calls: string[] = [];
    const fake = {
      getObject: async () => secret('ns', 'a'),
      registerPod: (pod: Pod) => calls.push(`register ${pod.metadata?.name}`),
      unregisterPod: (pod: Pod) => calls.push(`unregister ${pod.metadata?.name}`),
    };
    const manager = createSecretManager(fake);
    manager.registerPod({ metadata: { name: 'p' } });
    manager.unregisterPod({ metadata: { name: 'p' } });
    assert.deepEqual(calls, ['register p', 'unregister p']);
  });
});

describe('createObjectManagers', () => {
  test('an unknown strategy is refused with the upstream message', () => {
    assert.throws(
      () => createObjectManagers({ strategy: 'Poll', source: createMemorySource() }),
      (err: unknown) =>
        isBerthError(err, 'BERTH_UNKNOWN_STRATEGY') &&
        err.message === 'unknown configmap and secret manager mode: Poll',
    );
  });

  test('Watch is the default; Cache and Watch reject reads of anything never registered', async () => {
    assert.equal(DEFAULT_CHANGE_DETECTION_STRATEGY, 'Watch');
    const source = createMemorySource();
    source.put('secrets', secret('ns', 'a'));
    const watching = createObjectManagers({ source, clock: new FakeClock() });
    assert.equal(watching.strategy, 'Watch');
    const caching = createObjectManagers({ strategy: 'Cache', source, clock: new FakeClock() });
    for (const managers of [watching, caching]) {
      await assert.rejects(managers.secrets.getSecret('ns', 'a'), /object "ns"\/"a" not registered/);
      await assert.rejects(managers.configMaps.getConfigMap('ns', 'a'), /not registered/);
      await managers.stop();
    }
  });

  test('registerPod registers with both kinds, and stats/pods describe what is held', async () => {
    const memory = createMemorySource();
    memory.put('secrets', secret('ns', 'token'));
    memory.put('configmaps', configMap('ns', 'settings'));
    const clock = new FakeClock();
    const managers = createObjectManagers({ strategy: 'Watch', source: memory, clock });
    managers.start();
    const pod: Pod = {
      metadata: { namespace: 'ns', name: 'web', uid: 'u1' },
      spec: {
        containers: [{ env: [{ name: 'T', valueFrom: { secretKeyRef: { name: 'token' } } }] }],
        volumes: [{ name: 'c', configMap: { name: 'settings' } }],
      },
    };
    managers.registerPod(pod);
    assert.deepEqual(managers.pods(), [
      { namespace: 'ns', name: 'web', uid: 'u1', secrets: ['token'], configMaps: ['settings'] },
    ]);
    assert.equal((await managers.secrets.getSecret('ns', 'token')).metadata.name, 'token');
    assert.equal((await managers.configMaps.getConfigMap('ns', 'settings')).metadata.name, 'settings');
    assert.deepEqual(managers.stats(), {
      strategy: 'Watch',
      pods: 1,
      secrets: { objects: 1, watchesOpen: 1 },
      configMaps: { objects: 1, watchesOpen: 1 },
    });
    assert.throws(() => managers.registerPod({ metadata: { namespace: 'ns', name: 'x' } }), /metadata\.uid/);
    managers.unregisterPod(pod);
    assert.deepEqual(managers.stats().secrets, { objects: 0, watchesOpen: 0 });
    assert.deepEqual(managers.pods(), []);
    await managers.stop();
    await managers.stop();
  });

  test('Cache uses the TTL (and getTtl) for refreshes', async () => {
    const memory = createMemorySource();
    const source = countingSource(memory);
    memory.put('secrets', secret('ns', 'token'));
    const clock = new FakeClock();
    let ttl: { ttlMs: number } | undefined;
    const managers = createObjectManagers({
      strategy: 'Cache',
      source,
      clock,
      ttlMs: 10_000,
      getTtl: () => ttl,
    });
    managers.registerPod({
      metadata: { namespace: 'ns', name: 'p', uid: 'u' },
      spec: { imagePullSecrets: [{ name: 'token' }] },
    });
    await managers.secrets.getSecret('ns', 'token');
    await clock.advance(9_999);
    await managers.secrets.getSecret('ns', 'token');
    assert.equal(source.count('get'), 1);
    await clock.advance(1);
    await managers.secrets.getSecret('ns', 'token');
    assert.equal(source.count('get'), 2);
    ttl = { ttlMs: 0 };
    await managers.secrets.getSecret('ns', 'token');
    assert.equal(source.count('get'), 3);
    assert.deepEqual(managers.stats().secrets, { objects: 1, watchesOpen: 0 });
  });

  test('Watch managers recycle idle watches once started', async () => {
    const memory = createMemorySource();
    memory.put('secrets', secret('ns', 'token'));
    const clock = new FakeClock();
    const managers = createObjectManagers({ source: memory, clock, resyncIntervalMs: 60_000 });
    managers.start();
    managers.registerPod({
      metadata: { namespace: 'ns', name: 'p', uid: 'u' },
      spec: { imagePullSecrets: [{ name: 'token' }] },
    });
    await managers.secrets.getSecret('ns', 'token');
    await clock.advance(5 * 60_000); // maxIdleTime = 5 × resync; the tick at exactly 5 min is not past it
    assert.equal(managers.stats().secrets.watchesOpen, 1);
    await clock.advance(60_000);
    await waitFor('idle watch recycled', () => managers.stats().secrets.watchesOpen === 0);
    await managers.stop();
  });
});
