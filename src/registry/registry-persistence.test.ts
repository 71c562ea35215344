import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BerthError, type PluginEvent } from '../common/index.js';
import { createMemoryStorage, createSqliteStorage, type RegistryStorage } from '../storage/index.js';
import { createRecordingLogger, type LogRecord, storageKinds } from '../testing/harness/index.js';
import { createTempDir, FakeClock, nodePlugin } from '../testing/index.js';
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
    it(`restores every instance, in order, with every field (${kind.name})`, async () => {
      const fixture = await kind.create();
      try {
        const clock = new FakeClock(1_000);
        const first = createRegistry({ storage: fixture.storage(), clock });
        for (let n = 0; n < 5; n++) {
          await first.registerPlugin(nodePlugin(n, { options: { Provider: 'org.example', n: String(n) } }));
          await first.registerPlugin(nodePlugin(n, { name: 'second', type: 'csi-controller' }));
        }
        await first.registerPlugin(nodePlugin(9, { type: 'emptied' }));
        await first.deregisterPlugin('emptied', 'my-plugin', 'alloc-9');
        await first.deregisterPlugin('csi-node', 'my-plugin', 'alloc-2');
        const before = snapshot(first);
        await first.stop();

        const second = createRegistry({ storage: await fixture.restart(), clock });
        assert.deepEqual(snapshot(second), before);
        assert.deepEqual(
          second.listInstances('csi-node', 'my-plugin').map((i) => i.allocId),
          ['alloc-4', 'alloc-3', 'alloc-1', 'alloc-0'],
        );
        assert.deepEqual(second.listPlugins('emptied'), [], 'a type whose instances are gone stays known');
        assert.equal(second.listPlugins('never-seen'), undefined);
      } finally {
        await fixture.dispose();
      }
    });
  }

  it('a corrupt SQLite database: the registry starts empty and reports a storage error', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      writeFileSync(path, 'this is not a database, it is a grocery list: eggs, milk, sockets');
      const logs: LogRecord[] = [];
      const tapped: PluginEvent[] = [];
      const storage = createSqliteStorage({ path, clock: new FakeClock() });
      await storage.start();
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
        await registry.registerPlugin(nodePlugin(0));
        await storage.stop();
        const reopened = createSqliteStorage({ path });
        await reopened.start();
        const again = createRegistry({ storage: reopened });
        assert.equal(again.listPlugins('csi-node')?.[0]?.allocId, 'alloc-0');
        await reopened.stop();
      } finally {
        await storage.stop();
      }
    } finally {
      dir.remove();
    }
  });

  it('any storage whose read fails: empty registry, reported, not thrown', async () => {
    const failing: RegistryStorage = {
      ...createMemoryStorage(),
      getDynamicPluginRegistryState: () => {
        throw new BerthError('BERTH_STORAGE_FAILED', 'cannot read');
      },
    };
    const tapped: PluginEvent[] = [];
    const registry = createRegistry({ storage: failing, onEvent: (e) => tapped.push(e) });
    await registry.start();
    assert.deepEqual(registry.types(), []);
    assert.deepEqual(
      tapped.map((e) => (e.type === 'storage-error' ? e.error : e.type)),
      [{ code: 'BERTH_STORAGE_FAILED', message: 'cannot read' }],
    );
  });

  it('a stored state without a plugins map counts as empty', async () => {
    const storage: RegistryStorage = {
      ...createMemoryStorage(),
      getDynamicPluginRegistryState: () =>
        ({}) as ReturnType<RegistryStorage['getDynamicPluginRegistryState']>,
    };
    const registry = createRegistry({ storage });
    await registry.start();
    assert.deepEqual(registry.types(), []);
    await registry.registerPlugin(nodePlugin(0));
    assert.equal(registry.listPlugins('csi-node')?.length, 1);
  });
});
