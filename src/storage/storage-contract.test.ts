import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginInstanceInfo } from '../common/index.js';
import { storageKinds } from '../testing/index.js';
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
    it('returns undefined before anything is stored, then what was stored (empty state)', () => {
      const { storage: opened, restart: reopen, dispose } = kind.create();
      const storage = opened();
      try {
        assert.equal(storage.getDynamicPluginRegistryState(), undefined);
        const empty: RegistryState = { plugins: {} };
        storage.putDynamicPluginRegistryState(empty);
        assert.deepEqual(storage.getDynamicPluginRegistryState(), { plugins: {} });
        assert.deepEqual(reopen().getDynamicPluginRegistryState(), { plugins: {} });
      } finally {
        dispose();
      }
    });

    it('keeps every instance, in order, with all fields, across a reopen', () => {
      const { storage: opened, restart: reopen, dispose } = kind.create();
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
        const restored = reopen().getDynamicPluginRegistryState();
        assert.deepEqual(restored, state);
        assert.deepEqual(
          restored?.plugins['csi-node']?.['my-plugin']?.map((i) => i.allocId),
          ['alloc-2', 'alloc-1', 'alloc-0'],
        );
      } finally {
        dispose();
      }
    });

    it('keeps types without names, names without instances, and odd keys', () => {
      const { storage: opened, restart: reopen, dispose } = kind.create();
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
        const restored = reopen().getDynamicPluginRegistryState();
        assert.deepEqual(restored, state);
        assert.ok(restored !== undefined && Object.hasOwn(restored.plugins, '__proto__'));
      } finally {
        dispose();
      }
    });

    it('hands out copies: changing a returned or stored object does not change the store', () => {
      const { storage: opened, dispose } = kind.create();
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
        dispose();
      }
    });

    it('a later put replaces the whole state', () => {
      const { storage: opened, restart: reopen, dispose } = kind.create();
      const storage = opened();
      try {
        storage.putDynamicPluginRegistryState({
          plugins: { a: { x: [instance(1, { type: 'a', name: 'x' })] } },
        });
        storage.putDynamicPluginRegistryState({ plugins: { b: {} } });
        assert.deepEqual(reopen().getDynamicPluginRegistryState(), { plugins: { b: {} } });
      } finally {
        dispose();
      }
    });

    it('throws BERTH_STORAGE_FAILED once closed', () => {
      const { storage: opened, dispose } = kind.create();
      const storage = opened();
      try {
        storage.close();
        storage.close();
        assert.throws(() => storage.getDynamicPluginRegistryState(), { code: 'BERTH_STORAGE_FAILED' });
        assert.throws(() => storage.putDynamicPluginRegistryState({ plugins: {} }), {
          code: 'BERTH_STORAGE_FAILED',
        });
      } finally {
        dispose();
      }
    });
  });
}
