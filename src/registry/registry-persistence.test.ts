import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BerthError, type PluginEvent } from '../common/index.js';
import { createMemoryStorage, openSqliteStorage, type StateStorage } from '../storage/index.js';
import {
  createRecordingLogger,
  createTempDir,
  FakeClock,
  type LogRecord,
  nodePlugin,
  storageKinds,
} from '../testing/index.js';
import { createRegistry, type Registry } from './index.js';

function snapshot(registry: Registry) {
  return registry.types().map((type) => ({
    type,
    names: (registry.listPlugins(type) ?? []).map((current) => ({
      name: current.name,
      instances: registry.listInstances(type, current.name),
    })),
  }));
}

describe('registry persistence', () => {
  for (const kind of storageKinds) {
    it(`restores every instance, in order, with every field (${kind.name})`, () => {
      const fixture = kind.create();
      try {
        const clock = new FakeClock(1_000);
        const first = createRegistry({ storage: fixture.storage(), clock });
        for (let n = 0; n < 5; n++) {
          first.registerPlugin(nodePlugin(n, { options: { Provider: 'org.example', n: String(n) } }));
          first.registerPlugin(nodePlugin(n, { name: 'second', type: 'csi-controller' }));
        }
        first.registerPlugin(nodePlugin(9, { type: 'emptied' }));
        first.deregisterPlugin('emptied', 'my-plugin', 'alloc-9');
        first.deregisterPlugin('csi-node', 'my-plugin', 'alloc-2');
        const before = snapshot(first);
        first.shutdown();

        const second = createRegistry({ storage: fixture.restart(), clock });
        assert.deepEqual(snapshot(second), before);
        assert.deepEqual(
          second.listInstances('csi-node', 'my-plugin').map((i) => i.allocId),
          ['alloc-4', 'alloc-3', 'alloc-1', 'alloc-0'],
        );
        assert.deepEqual(second.listPlugins('emptied'), [], 'a type whose instances are gone stays known');
        assert.equal(second.listPlugins('never-seen'), undefined);
      } finally {
        fixture.dispose();
      }
    });
  }

  it('a corrupt SQLite database: the registry starts empty and reports a storage error', () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      writeFileSync(path, 'this is not a database, it is a grocery list: eggs, milk, sockets');
      const logs: LogRecord[] = [];
      const tapped: PluginEvent[] = [];
      const storage = openSqliteStorage({ path, clock: new FakeClock() });
      try {
        const registry = createRegistry({
          storage,
          logger: createRecordingLogger(logs),
          onEvent: (e) => tapped.push(e),
        });
        assert.deepEqual(registry.types(), []);
        assert.equal(tapped.length, 1);
        const event = tapped[0];
        assert.equal(event?.type, 'storage-error');
        if (event?.type === 'storage-error') {
          assert.equal(event.error.code, 'BERTH_STORAGE_CORRUPT');
          assert.equal(event.path, path);
          assert.match(event.error.message, /moved to .*state\.db\.corrupt-/);
        }
        assert.ok(logs.some((l) => l.level === 'error' && l.fields.code === 'BERTH_STORAGE_CORRUPT'));
        assert.ok(storage.corruption !== undefined && existsSync(storage.corruption.movedTo));
        // It carries on, on the fresh database.
        registry.registerPlugin(nodePlugin(0));
        storage.close();
        const again = createRegistry({ storage: openSqliteStorage({ path }) });
        assert.equal(again.listPlugins('csi-node')?.[0]?.allocId, 'alloc-0');
      } finally {
        storage.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('any storage whose read fails: empty registry, reported, not thrown', () => {
    const failing: StateStorage = {
      ...createMemoryStorage(),
      getDynamicPluginRegistryState: () => {
        throw new BerthError('BERTH_STORAGE_FAILED', 'cannot read');
      },
    };
    const tapped: PluginEvent[] = [];
    const registry = createRegistry({ storage: failing, onEvent: (e) => tapped.push(e) });
    assert.deepEqual(registry.types(), []);
    assert.deepEqual(
      tapped.map((e) => (e.type === 'storage-error' ? e.error : e.type)),
      [{ code: 'BERTH_STORAGE_FAILED', message: 'cannot read' }],
    );
  });

  it('a stored state without a plugins map counts as empty', () => {
    const storage: StateStorage = {
      ...createMemoryStorage(),
      getDynamicPluginRegistryState: () => ({}) as ReturnType<StateStorage['getDynamicPluginRegistryState']>,
    };
    const registry = createRegistry({ storage });
    assert.deepEqual(registry.types(), []);
    registry.registerPlugin(nodePlugin(0));
    assert.equal(registry.listPlugins('csi-node')?.length, 1);
  });
});
