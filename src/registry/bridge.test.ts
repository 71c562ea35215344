import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../common/index.js';
import type { PluginCallContext } from '../handlers/types.js';
import { createSqliteStorage, type SqliteStorage } from '../storage/index.js';
import { createTempDir } from '../testing/index.js';
import { createRegistry, createRegistryBridge } from './index.js';

async function openSqliteStorage(options: { path: string }): Promise<SqliteStorage> {
  const storage = createSqliteStorage(options);
  await storage.start();
  return storage;
}

function context(socketPath: string, type = 'csi'): PluginCallContext {
  return { type, socketPath, foundInDeprecatedDir: false };
}

describe('registry bridge', () => {
  it('records a handler registration as a registry instance keyed by its registration socket', async () => {
    const registry = createRegistry();
    const handler = createRegistryBridge({ registry }).handlerFor('csi');
    await handler.validatePlugin('p', '/run/p/csi.sock', ['1.0.0', '0.9.0'], context('/reg/p.sock'));
    await handler.registerPlugin('p', '/run/p/csi.sock', ['1.0.0', '0.9.0'], context('/reg/p.sock'));
    const [instance] = registry.listInstances('csi', 'p');
    assert.ok(instance);
    const { registeredAt, ...rest } = instance;
    assert.equal(typeof registeredAt, 'number');
    assert.deepEqual(rest, {
      type: 'csi',
      name: 'p',
      version: '1.0.0',
      connectionInfo: { socketPath: '/run/p/csi.sock' },
      allocId: '/reg/p.sock',
      options: {
        endpoint: '/run/p/csi.sock',
        socketPath: '/reg/p.sock',
        versions: '1.0.0,0.9.0',
        source: 'plugins-dir',
      },
    });
  });

  it('keeps two sockets of one plugin as two instances; deregistering one makes the other current', async () => {
    const registry = createRegistry();
    const handler = createRegistryBridge({ registry }).handlerFor('csi');
    await handler.registerPlugin('p', '/run/old.sock', [], context('/reg/old.sock'));
    await handler.registerPlugin('p', '/run/new.sock', ['2'], context('/reg/new.sock'));
    assert.equal(registry.listPlugins('csi')?.[0]?.allocId, '/reg/new.sock');
    assert.equal(
      registry.pluginForAlloc('csi', 'p', '/reg/old.sock').version,
      '',
      'no versions: empty version',
    );
    await handler.deRegisterPlugin('p', '/run/new.sock', context('/reg/new.sock'));
    assert.equal(registry.listPlugins('csi')?.[0]?.allocId, '/reg/old.sock');
  });

  it('deregistering a plugin of a type the registry never saw is harmless', async () => {
    const registry = createRegistry();
    const handler = createRegistryBridge({ registry }).handlerFor('never');
    await handler.deRegisterPlugin('p', '/run/p.sock', context('/reg/p.sock', 'never'));
    assert.deepEqual(registry.types(), []);
  });

  it('surfaces registry rejections to the plugin manager', async () => {
    const registry = createRegistry();
    const handler = createRegistryBridge({ registry }).handlerFor('csi');
    assert.throws(() => handler.registerPlugin('', '/run/p.sock', [], context('/reg/p.sock')), {
      code: 'BERTH_PLUGIN_INVALID',
      message: 'Plugin.Name must not be empty',
    });
  });

  it('reconcileRestored removes restored instances whose socket is gone, and only those', async () => {
    const dir = createTempDir();
    try {
      const path = dir.join('state.db');
      const storage = await openSqliteStorage({ path });
      const before = createRegistry({ storage });
      const handler = createRegistryBridge({ registry: before }).handlerFor('csi');
      await handler.registerPlugin('a', '/run/a.sock', ['1'], context('/reg/a.sock'));
      await handler.registerPlugin('b', '/run/b.sock', ['1'], context('/reg/b.sock'));
      await handler.registerPlugin('b', '/run/b2.sock', ['1'], context('/reg/b2.sock'));
      await handler.registerPlugin('c', '/run/c.sock', ['1'], context('/reg/c.sock'));
      await before.stop();
      await storage.stop();

      // The daemon restarts: the registry restores all four instances.
      const restoredStorage = await openSqliteStorage({ path });
      try {
        const registry = createRegistry({ storage: restoredStorage });
        const bridge = createRegistryBridge({ registry });
        // The plugin manager re-registers c before the scan completes (its socket is not in the scan set).
        await bridge.handlerFor('csi').registerPlugin('c', '/run/c.sock', ['1'], context('/reg/c.sock'));
        const removed = await bridge.reconcileRestored(new Set(['/reg/a.sock', '/reg/b.sock']));
        assert.deepEqual(removed.map((i) => `${i.name}@${i.allocId}`).sort(), ['b@/reg/b2.sock']);
        assert.deepEqual(
          registry.listInstances('csi', 'b').map((i) => i.allocId),
          ['/reg/b.sock'],
          'the older, live instance of b is current again',
        );
        assert.equal(registry.listInstances('csi', 'a').length, 1);
        assert.equal(registry.listInstances('csi', 'c').length, 1, 'confirmed by the plugin manager: kept');
        assert.deepEqual((await bridge.reconcileRestored(new Set())).map((i) => i.name).sort(), ['a', 'b']);
        assert.deepEqual(await bridge.reconcileRestored(new Set()), [], 'nothing restored is left to check');
        await registry.stop();
      } finally {
        await restoredStorage.stop();
      }
      const after = await openSqliteStorage({ path });
      try {
        const registry = createRegistry({ storage: after });
        assert.deepEqual(
          (registry.listPlugins('csi') ?? []).map((i) => i.name),
          ['c'],
          'the removals were persisted',
        );
      } finally {
        await after.stop();
      }
    } finally {
      dir.remove();
    }
  });

  it('records handler facts on the instance: with the registration, then as updates, never over its own keys', async () => {
    const registry = createRegistry();
    const bridge = createRegistryBridge({ registry });
    const handler = bridge.handlerFor('csi');
    const ref = { type: 'csi', name: 'p', socketPath: '/reg/p.sock' };
    // Recorded while the registration is under way: it lands with the instance (no extra event).
    bridge.recordFacts(ref, { 'csi.nodeId': 'n1' });
    const events = registry.subscribe('csi');
    const iterator = events[Symbol.asyncIterator]();
    await handler.registerPlugin('p', '/run/p.sock', ['1.0.0'], context('/reg/p.sock'));
    const registered = await iterator.next();
    assert.equal(registered.value?.type, 'registered');
    assert.equal(registry.listInstances('csi', 'p')[0]?.options['csi.nodeId'], 'n1');
    // Later facts update the instance in place.
    bridge.recordFacts(ref, { 'csi.nodeId': 'n2', 'csi.vendorVersion': '1.2' });
    const updated = await iterator.next();
    assert.equal(updated.value?.type, 'updated');
    assert.deepEqual(registry.listInstances('csi', 'p')[0]?.options, {
      endpoint: '/run/p.sock',
      socketPath: '/reg/p.sock',
      versions: '1.0.0',
      source: 'plugins-dir',
      'csi.nodeId': 'n2',
      'csi.vendorVersion': '1.2',
    });
    assert.throws(
      () => bridge.recordFacts(ref, { endpoint: '/elsewhere' }),
      (err: unknown) => isBerthError(err, 'BERTH_INVALID_ARGUMENT'),
    );
    // After deregistration facts wait for the next registration again; stale ones do not linger.
    await handler.deRegisterPlugin('p', '/run/p.sock', context('/reg/p.sock'));
    await handler.registerPlugin('p', '/run/p.sock', ['1.0.0'], context('/reg/p.sock'));
    assert.equal(registry.listInstances('csi', 'p')[0]?.options['csi.nodeId'], undefined);
    await registry.stop();
  });

  it('refuses facts that take an instance over the 64 KiB budget, naming it, and keeps what was there', async () => {
    const registry = createRegistry();
    const bridge = createRegistryBridge({ registry });
    const handler = bridge.handlerFor('csi');
    const instance = { type: 'csi', name: 'p', socketPath: '/reg/p.sock' };
    const overBudget =
      /is \d+ bytes \(GetInfo and handler facts together\), more than the budget of 65536 bytes per plugin/;
    // Before the registration: refused at once, nothing held for it.
    assert.throws(
      () => bridge.recordFacts(instance, { 'csi.nodeId': 'n'.repeat(70_000) }),
      (err: unknown) => isBerthError(err, 'BERTH_PLUGIN_INFO_INVALID') && overBudget.test(err.message),
    );
    bridge.recordFacts(instance, { 'csi.nodeId': 'n'.repeat(60_000) });
    // The facts fit alone, but not with what the registration adds (a 6,000-byte endpoint).
    const endpoint = `/run/${'e'.repeat(6_000)}.sock`;
    assert.throws(
      () => handler.registerPlugin('p', endpoint, ['1.0.0'], context('/reg/p.sock')),
      (err: unknown) => isBerthError(err, 'BERTH_PLUGIN_INFO_INVALID') && overBudget.test(err.message),
    );
    assert.deepEqual(registry.listInstances('csi', 'p'), []);
    // A registration within the budget, then an update that would take it over: the stored facts stay.
    bridge.recordFacts(instance, { 'csi.nodeId': 'node-1' });
    await handler.registerPlugin('p', '/run/p/csi.sock', ['1.0.0'], context('/reg/p.sock'));
    assert.throws(
      () => bridge.recordFacts(instance, { 'csi.accessibleTopology': 't'.repeat(66_000) }),
      (err: unknown) => isBerthError(err, 'BERTH_PLUGIN_INFO_INVALID') && overBudget.test(err.message),
    );
    assert.equal(registry.listInstances('csi', 'p')[0]?.options['csi.nodeId'], 'node-1');
    assert.equal(registry.listInstances('csi', 'p')[0]?.options['csi.accessibleTopology'], undefined);
  });
});
