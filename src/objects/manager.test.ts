import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { countedSecrets } from '../testing/harness/index.js';
import { FakeClock, podWithSecrets, type SecretsToAttach } from '../testing/index.js';
import { createCacheBasedManager, type RegisterMode } from './manager.js';
import type { Pod } from './pod.js';
import { getConfigMapNames, getSecretNames } from './references.js';
import type { Store } from './store.js';
import { createTtlStore } from './ttl-store.js';

const ALL_NAMES = ['s1', 's2', 's3', 's4', 's5', 's6', 's10', 's20', 's30', 's40', 's50', 's60', 's7', 's70'];

function setup(ttlMs: number, mode?: RegisterMode) {
  const { source } = countedSecrets(['ns1', 'ns2', 'ns3'], ALL_NAMES);
  const store = createTtlStore({
    getObject: (ns, name, options) => source.get('secrets', ns, name, options),
    clock: new FakeClock(),
    defaultTtlMs: ttlMs,
  });
  const manager = createCacheBasedManager({
    store,
    getReferencedObjects: getSecretNames,
    ...(mode === undefined ? {} : { mode }),
  });
  return { source, store, manager };
}

async function exists(store: Store, ns: string, name: string): Promise<boolean> {
  try {
    await store.get(ns, name);
    return true;
  } catch (err) {
    assert.ok(isBerthError(err, 'BERTH_OBJECT_NOT_REGISTERED'), String(err));
    assert.equal(err.message, `object "${ns}"/"${name}" not registered`);
    return false;
  }
}

describe('cache-based manager (upstream cache_based_manager_test)', () => {
  const first: SecretsToAttach = {
    imagePullSecretNames: ['s1'],
    containerEnvSecrets: [{ envVarNames: ['s1'], envFromNames: ['s10'] }, { envVarNames: ['s2'] }],
  };
  const second: SecretsToAttach = {
    imagePullSecretNames: ['s1'],
    containerEnvSecrets: [
      { envVarNames: ['s1'] },
      { envVarNames: ['s2'], envFromNames: ['s20'] },
      { envVarNames: ['s3'] },
    ],
  };

  for (const [mode, fetchesOnUpdate] of [
    ['diff', 2],
    ['readd-all', 4],
  ] as const) {
    test(`#7 cache invalidation (${mode}): an update re-fetches ${fetchesOnUpdate} of 4`, async () => {
      const { source, store, manager } = setup(60_000, mode);
      const getAll = async (names: string[]) => {
        source.reset();
        for (const name of names) await store.get('ns1', name);
        return source.count('get', 'secrets');
      };
      manager.registerPod(podWithSecrets('ns1', 'name1', first));
      assert.equal(await getAll(['s1', 's10', 's2']), 3);
      manager.registerPod(podWithSecrets('ns1', 'name1', second));
      // diff (v1.29+): only the new s20 and s3 fetch; readd-all (v1.26–1.28): all four.
      assert.equal(await getAll(['s1', 's2', 's20', 's3']), fetchesOnUpdate);
      // A new pod referencing s1, s10, s2 invalidates them (s10 was dropped and is new again).
      manager.registerPod(podWithSecrets('ns1', 'name2', first));
      assert.equal(await getAll(['s1', 's10', 's2', 's20', 's3']), 3);
    });
  }

  test('a resync that changes nothing does no fetch (diff mode, kubernetes#120126)', async () => {
    const { source, store, manager } = setup(60_000);
    const pod = podWithSecrets('ns1', 'name1', first);
    manager.registerPod(pod);
    await store.get('ns1', 's1');
    for (let i = 0; i < 5; i++) manager.registerPod(pod);
    await store.get('ns1', 's1');
    assert.equal(source.count('get'), 1);
  });

  test('#8 register idempotence', () => {
    const { store, manager } = setup(60_000);
    const s1: SecretsToAttach = { imagePullSecretNames: ['s1'] };
    const refs = () => store.references('ns1', 's1');
    manager.registerPod(podWithSecrets('ns1', 'name1', s1));
    assert.equal(refs(), 1);
    manager.registerPod(podWithSecrets('ns1', 'name1', s1));
    assert.equal(refs(), 1);
    manager.registerPod(podWithSecrets('ns1', 'name2', s1));
    assert.equal(refs(), 2);
    manager.unregisterPod(podWithSecrets('ns1', 'name1', s1));
    assert.equal(refs(), 1);
    manager.unregisterPod(podWithSecrets('ns1', 'name1', s1));
    assert.equal(refs(), 1);
    manager.unregisterPod(podWithSecrets('ns1', 'name2', s1));
    assert.equal(refs(), 0);
  });

  for (const mode of ['diff', 'readd-all'] as const) {
    test(`#9 reference counts after a mixed sequence (${mode})`, () => {
      const { store, manager } = setup(60_000, mode);
      const s1: SecretsToAttach = {
        imagePullSecretNames: ['s1'],
        containerEnvSecrets: [
          { envVarNames: ['s1'], envFromNames: ['s10'] },
          { envVarNames: ['s2'] },
          { envVarNames: ['s3'] },
        ],
      };
      const s2: SecretsToAttach = {
        imagePullSecretNames: ['s2'],
        containerEnvSecrets: [{ envVarNames: ['s4'] }, { envVarNames: ['s5'], envFromNames: ['s50'] }],
      };
      const s3: SecretsToAttach = {
        imagePullSecretNames: ['s1'],
        containerEnvSecrets: [{ envVarNames: ['s3'], envFromNames: ['s30'] }, { envVarNames: ['s5'] }],
      };
      const s4: SecretsToAttach = {
        imagePullSecretNames: ['s3'],
        containerEnvSecrets: [{ envVarNames: ['s6'] }, { envFromNames: ['s60'] }],
      };
      const s5: SecretsToAttach = {
        containerEnvSecrets: [{ envVarNames: ['s7'] }, { envFromNames: ['s70'] }],
      };
      manager.registerPod(podWithSecrets('ns1', 'name1', s1));
      manager.registerPod(podWithSecrets('ns1', 'name2', s1));
      manager.registerPod(podWithSecrets('ns1', 'name2', s2));
      manager.registerPod(podWithSecrets('ns1', 'name3', s2));
      manager.registerPod(podWithSecrets('ns1', 'name4', s2));
      manager.unregisterPod(podWithSecrets('ns1', 'name3', s2));
      manager.registerPod(podWithSecrets('ns1', 'name5', s3));
      manager.registerPod(podWithSecrets('ns1', 'name6', s3));
      manager.registerPod(podWithSecrets('ns1', 'name7', s4));
      manager.unregisterPod(podWithSecrets('ns1', 'name7', s4));
      manager.registerPod(podWithSecrets('ns1', 'other-name', s1));
      manager.registerPod(podWithSecrets('ns1', 'other-name', s2));
      manager.unregisterPod(podWithSecrets('ns1', 'other-name', s2));
      manager.registerPod(podWithSecrets('ns1', 'noop-pod', s5));
      manager.registerPod(podWithSecrets('ns1', 'noop-pod', s5));
      const expected = {
        s1: 3,
        s10: 1,
        s2: 3,
        s3: 3,
        s30: 2,
        s4: 2,
        s5: 4,
        s50: 2,
        s6: 0,
        s60: 0,
        s7: 1,
        s70: 1,
      };
      const actual = Object.fromEntries(
        Object.keys(expected).map((name) => [name, store.references('ns1', name)]),
      );
      assert.deepEqual(actual, expected);
    });
  }

  test('#10 and secret manager end to end: only the current references exist', async () => {
    const { store, manager } = setup(0);
    manager.registerPod(
      podWithSecrets('ns1', 'name1', {
        imagePullSecretNames: ['s1'],
        containerEnvSecrets: [{ envVarNames: ['s1'] }, { envVarNames: ['s2'] }, { envFromNames: ['s20'] }],
      }),
    );
    const s2: SecretsToAttach = {
      imagePullSecretNames: ['s1'],
      containerEnvSecrets: [{ envVarNames: ['s3'] }, { envVarNames: ['s4'] }, { envFromNames: ['s40'] }],
    };
    manager.registerPod(podWithSecrets('ns1', 'name1', s2));
    manager.registerPod(podWithSecrets('ns2', 'name2', s2));
    const s3: SecretsToAttach = {
      imagePullSecretNames: ['s5'],
      containerEnvSecrets: [{ envVarNames: ['s6'] }, { envFromNames: ['s60'] }],
    };
    manager.registerPod(podWithSecrets('ns3', 'name', s3));
    manager.unregisterPod(podWithSecrets('ns3', 'name', s3));
    for (const ns of ['ns1', 'ns2', 'ns3']) {
      for (const name of ['s1', 's2', 's3', 's4', 's5', 's6', 's20', 's40', 's50']) {
        const shouldExist = ['s1', 's3', 's4', 's40'].includes(name) && (ns === 'ns1' || ns === 'ns2');
        assert.equal(await exists(store, ns, name), shouldExist, `${ns}/${name}`);
      }
    }
  });
});

describe('cache-based manager berth specifics', () => {
  test('unregister drops the references of the pod as registered, not of the argument', async () => {
    const { store, manager } = setup(60_000);
    manager.registerPod(podWithSecrets('ns1', 'p', { imagePullSecretNames: ['s1', 's2'] }));
    manager.unregisterPod(podWithSecrets('ns1', 'p', { imagePullSecretNames: ['s3'] }));
    assert.equal(store.references('ns1', 's1'), 0);
    assert.equal(store.references('ns1', 's2'), 0);
    assert.equal(store.references('ns1', 's3'), 0);
    assert.deepEqual(manager.registeredPods(), []);
  });

  test('a pod recreated under the same name with a new uid is a separate registration', () => {
    const { store, manager } = setup(60_000);
    const attach = { imagePullSecretNames: ['s1'] };
    manager.registerPod(podWithSecrets('ns1', 'p', attach, 'uid-old'));
    manager.registerPod(podWithSecrets('ns1', 'p', attach, 'uid-new'));
    assert.equal(store.references('ns1', 's1'), 2);
    manager.unregisterPod(podWithSecrets('ns1', 'p', attach, 'uid-old'));
    assert.equal(store.references('ns1', 's1'), 1);
    assert.deepEqual(manager.registeredPods(), [
      { namespace: 'ns1', name: 'p', uid: 'uid-new', objects: ['s1'] },
    ]);
  });

  test('pods without namespace, name or uid are rejected, naming the field', () => {
    const { manager } = setup(60_000);
    const cases: Array<[unknown, RegExp]> = [
      [null, /pod must be an object/],
      [{}, /pod metadata is missing/],
      [{ metadata: { name: 'p', uid: 'u' } }, /metadata\.namespace/],
      [{ metadata: { namespace: 'n', uid: 'u' } }, /metadata\.name/],
      [{ metadata: { namespace: 'n', name: 'p' } }, /metadata\.uid/],
      [{ metadata: { namespace: 'n', name: 'p', uid: '' } }, /metadata\.uid/],
    ];
    for (const [pod, message] of cases) {
      assert.throws(
        () => manager.registerPod(pod as Pod),
        (err: unknown) => isBerthError(err, 'BERTH_INVALID_ARGUMENT') && message.test(err.message),
      );
      assert.throws(() => manager.unregisterPod(pod as Pod), message);
    }
  });

  test('getReferencedObjects decides the kind: a configmap manager ignores secrets', () => {
    const { store } = setup(60_000);
    const manager = createCacheBasedManager({ store, getReferencedObjects: getConfigMapNames });
    manager.registerPod(podWithSecrets('ns1', 'p', { imagePullSecretNames: ['s1'] }));
    assert.equal(store.references('ns1', 's1'), 0);
  });
});
