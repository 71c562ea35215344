import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginInstanceInfo } from '../common/index.js';
import { storageKinds } from '../testing/harness/index.js';
import type { RegistryState } from './index.js';

function instance(n: number, extra: Partial<PluginInstanceInfo> = {}): PluginInstanceInfo {
  return {
    type: 'csi-node',
    name: 'my-plugin',
    version: `v${n}`,
    connectionInfo: { socketPath: `/var/data/alloc/alloc-${n}/csi.sock` },
    allocId: `alloc-${n}`,
    options: { Provider: 'org.example', MountPoint: `/csi/${n}` },
    registeredAt: 1_700_000_000_000 + n,
    ...extra,
  };
}

for (const kind of storageKinds) {
  describe(`state storage contract (${kind.name})`, () => {
    it('returns undefined before anything is stored, then what was stored (empty state)', async () => {
      const { storage: opened, restart: reopen, dispose } = await kind.create();
      const storage = opened();
      try {
        assert.equal(storage.getDynamicPluginRegistryState(), undefined);
        const empty: RegistryState = { plugins: {} };
        storage.putDynamicPluginRegistryState(empty);
        assert.deepEqual(storage.getDynamicPluginRegistryState(), { plugins: {} });
        assert.deepEqual((await reopen()).getDynamicPluginRegistryState(), { plugins: {} });
      } finally {
        await dispose();
      }
    });

    it('keeps every instance, in order, with all fields, across a reopen', async () => {
      const { storage: opened, restart: reopen, dispose } = await kind.create();
      const storage = opened();
      try {
        const state: RegistryState = {
          plugins: {
            'csi-node': {
              'my-plugin': [instance(2), instance(1), instance(0)],
              other: [instance(7, { name: 'other', connectionInfo: { socketPath: '' }, allocId: '' })],
            },
            'csi-controller': {
              'my-plugin': [instance(3, { type: 'csi-controller', options: {} })],
            },
          },
        };
        storage.putDynamicPluginRegistryState(state);
        const restored = (await reopen()).getDynamicPluginRegistryState();
        assert.deepEqual(restored, state);
        assert.deepEqual(
          restored?.plugins['csi-node']?.['my-plugin']?.map((i) => i.allocId),
          ['alloc-2', 'alloc-1', 'alloc-0'],
        );
      } finally {
        await dispose();
      }
    });

    it('keeps types without names, names without instances, and odd keys', async () => {
      const { storage: opened, restart: reopen, dispose } = await kind.create();
      const storage = opened();
      try {
        const state: RegistryState = { plugins: { lonely: {}, 'csi-node': { gone: [] } } };
        Object.defineProperty(state.plugins, '__proto__', {
          value: { constructor: [instance(1, { type: '__proto__', name: 'constructor' })] },
          enumerable: true,
          writable: true,
          configurable: true,
        });
        storage.putDynamicPluginRegistryState(state);
        const restored = (await reopen()).getDynamicPluginRegistryState();
        assert.deepEqual(restored, state);
        assert.ok(restored !== undefined && Object.hasOwn(restored.plugins, '__proto__'));
      } finally {
        await dispose();
      }
    });

    it('hands out copies: changing a returned or stored object does not change the store', async () => {
      const { storage: opened, dispose } = await kind.create();
      const storage = opened();
      try {
        const state: RegistryState = { plugins: { 'csi-node': { 'my-plugin': [instance(1)] } } };
        storage.putDynamicPluginRegistryState(state);
        const list = state.plugins['csi-node']?.['my-plugin'];
        list?.push(instance(9));
        const first = storage.getDynamicPluginRegistryState();
        first?.plugins['csi-node']?.['my-plugin']?.pop();
        const again = storage.getDynamicPluginRegistryState();
        assert.deepEqual(
          again?.plugins['csi-node']?.['my-plugin']?.map((i) => i.allocId),
          ['alloc-1'],
        );
      } finally {
        await dispose();
      }
    });

    it('a later put replaces the whole state', async () => {
      const { storage: opened, restart: reopen, dispose } = await kind.create();
      const storage = opened();
      try {
        storage.putDynamicPluginRegistryState({
          plugins: { a: { x: [instance(1, { type: 'a', name: 'x' })] } },
        });
        storage.putDynamicPluginRegistryState({ plugins: { b: {} } });
        assert.deepEqual((await reopen()).getDynamicPluginRegistryState(), { plugins: { b: {} } });
      } finally {
        await dispose();
      }
    });

    it('throws BERTH_STORAGE_FAILED once stopped; stop is idempotent', async () => {
      const { storage: opened, dispose } = await kind.create();
      const storage = opened();
      try {
        const first = storage.stop();
        assert.equal(storage.stop(), first, 'stop is memoised');
        await first;
        await storage[Symbol.asyncDispose]();
        assert.equal(storage.state, 'stopped');
        assert.throws(() => storage.getDynamicPluginRegistryState(), { code: 'BERTH_STORAGE_FAILED' });
        assert.throws(() => storage.putDynamicPluginRegistryState({ plugins: {} }), {
          code: 'BERTH_STORAGE_FAILED',
        });
        await assert.rejects(storage.applyChanges([]), { code: 'BERTH_STORAGE_FAILED' });
      } finally {
        await dispose();
      }
    });

    it('applies row changes in order: front puts, in-place updates, deletes, across a reopen', async () => {
      const { storage: opened, restart: reopen, dispose } = await kind.create();
      const storage = opened();
      try {
        await storage.applyChanges([
          { op: 'put', info: instance(0), front: true },
          { op: 'put', info: instance(1), front: true },
        ]);
        await storage.applyChanges([{ op: 'put', info: instance(2), front: true }]);
        // In place: alloc-0 keeps its place (last), with its new definition.
        await storage.applyChanges([{ op: 'put', info: instance(0, { version: 'v0.1' }), front: false }]);
        await storage.applyChanges([
          { op: 'delete', type: 'csi-node', name: 'my-plugin', allocId: 'alloc-1' },
          { op: 'delete', type: 'csi-node', name: 'nobody', allocId: 'alloc-1' },
          { op: 'put', info: instance(3, { type: 'other', name: 'x' }), front: true },
          { op: 'delete', type: 'other', name: 'x', allocId: 'alloc-3' },
        ]);
        const expected: RegistryState = {
          plugins: {
            'csi-node': { 'my-plugin': [instance(2), instance(0, { version: 'v0.1' })] },
            other: {},
          },
        };
        assert.deepEqual(storage.getDynamicPluginRegistryState(), expected);
        assert.deepEqual((await reopen()).getDynamicPluginRegistryState(), expected);
        // A new instance goes in front of instances that were imported whole.
        const again = await reopen();
        await again.applyChanges([{ op: 'put', info: instance(4), front: true }]);
        assert.deepEqual(
          again.getDynamicPluginRegistryState()?.plugins['csi-node']?.['my-plugin']?.map((i) => i.allocId),
          ['alloc-4', 'alloc-2', 'alloc-0'],
        );
      } finally {
        await dispose();
      }
    });

    it('refuses a change it could not read back, and applies nothing of its batch', async () => {
      const { storage: opened, dispose } = await kind.create();
      const storage = opened();
      try {
        await storage.applyChanges([{ op: 'put', info: instance(0), front: true }]);
        const bad = { ...instance(1), options: { n: 1 } } as unknown as PluginInstanceInfo;
        await assert.rejects(
          storage.applyChanges([
            { op: 'put', info: instance(2), front: true },
            { op: 'put', info: bad, front: true },
          ]),
          { code: 'BERTH_INVALID_ARGUMENT' },
        );
        assert.deepEqual(
          storage.getDynamicPluginRegistryState()?.plugins['csi-node']?.['my-plugin']?.map((i) => i.allocId),
          ['alloc-0'],
        );
      } finally {
        await dispose();
      }
    });
  });
}
