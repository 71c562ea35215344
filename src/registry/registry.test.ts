import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginEvent, PluginInstanceInfo, RegistryEvent } from '../common/index.js';
import {
  createRecordingLogger,
  instrumented,
  type LogRecord,
  storageKinds,
} from '../testing/harness/index.js';
import { FakeClock, nextWithin, nodePlugin, waitFor } from '../testing/index.js';
import { createRegistry, type PluginDispenser, type Registry } from './index.js';

const echo: PluginDispenser = (info) => info;

function allocOf(value: unknown): string {
  return (value as PluginInstanceInfo).allocId;
}

function socketOf(value: unknown): string | undefined {
  return (value as PluginInstanceInfo).connectionInfo?.socketPath;
}

/** Registers a throwaway plugin of another name and returns the next event: proves nothing came before it. */
async function nextIsMarker(registry: Registry, events: AsyncIterator<RegistryEvent>, type = 'csi-node') {
  await registry.registerPlugin({
    type,
    name: 'marker',
    version: '',
    connectionInfo: { socketPath: '' },
    allocId: 'm',
    options: {},
  });
  const event = await nextWithin(events, 'marker event');
  assert.equal(event.type, 'registered');
  assert.equal(event.type === 'registered' ? event.plugin.name : '', 'marker', 'no event before the marker');
}

describe('registry: upstream scenarios', () => {
  it('register emits registered (no allocId needed)', async () => {
    const registry = createRegistry();
    const events = registry.subscribe('csi')[Symbol.asyncIterator]();
    await registry.registerPlugin({
      type: 'csi',
      name: 'my-plugin',
      version: '',
      connectionInfo: { socketPath: '' },
      allocId: '',
      options: {},
    });
    const event = await nextWithin(events, 'registered', 1000);
    assert.equal(event.type, 'registered');
    await registry.stop();
  });

  it('deregister emits deregistered carrying the removed entry', async () => {
    const registry = createRegistry();
    const events = registry.subscribe('csi')[Symbol.asyncIterator]();
    const info = {
      type: 'csi',
      name: 'my-plugin',
      version: '',
      connectionInfo: { socketPath: '' },
      allocId: 'alloc-0',
      options: {},
    };
    await registry.registerPlugin(info);
    await registry.deregisterPlugin('csi', 'my-plugin', 'alloc-0');
    assert.equal((await nextWithin(events, 'registered')).type, 'registered');
    const event = await nextWithin(events, 'deregistered');
    assert.equal(event.type, 'deregistered');
    assert.equal(event.type === 'deregistered' ? event.plugin.allocId : '', 'alloc-0');
    await registry.stop();
  });

  it('dispense: dispenser check first, then not-found, then success', async () => {
    const registry = createRegistry({ dispensers: { csi: () => ({ dummy: true }) } });
    await registry.registerPlugin({
      type: 'csi',
      name: 'my-plugin',
      version: '',
      connectionInfo: { socketPath: '' },
      allocId: '',
      options: {},
    });
    await assert.rejects(registry.dispensePlugin('unknown-type', 'unknown-name'), {
      code: 'BERTH_NO_DISPENSER',
      message: 'no plugin dispenser found for type: unknown-type',
    });
    await assert.rejects(registry.dispensePlugin('csi', 'unknown-name'), {
      code: 'BERTH_PLUGIN_NOT_FOUND',
      message: 'plugin unknown-name for type csi not found',
    });
    assert.deepEqual(await registry.dispensePlugin('csi', 'my-plugin'), { dummy: true });
  });

  it('types are isolated', async () => {
    const registry = createRegistry();
    await registry.registerPlugin(nodePlugin(0, { type: 'csi-controller' }));
    await registry.registerPlugin(nodePlugin(1, { type: 'csi-node' }));
    await registry.deregisterPlugin('csi-controller', 'my-plugin', 'alloc-0');
    assert.equal(registry.listPlugins('csi-node')?.length, 1);
    assert.deepEqual(registry.listPlugins('csi-controller'), []);
  });

  for (const kind of storageKinds) {
    describe(`with ${kind.name} storage`, () => {
      it('state survives re-creation', async () => {
        const fixture = await kind.create();
        try {
          const first = createRegistry({ storage: fixture.storage(), dispensers: { csi: echo } });
          await first.registerPlugin({
            type: 'csi',
            name: 'my-plugin',
            version: '',
            connectionInfo: { socketPath: '' },
            allocId: '',
            options: {},
          });
          assert.equal(
            ((await first.dispensePlugin('csi', 'my-plugin')) as PluginInstanceInfo).name,
            'my-plugin',
          );
          await first.stop();
          const second = createRegistry({ storage: await fixture.restart(), dispensers: { csi: echo } });
          assert.equal(
            ((await second.dispensePlugin('csi', 'my-plugin')) as PluginInstanceInfo).name,
            'my-plugin',
          );
        } finally {
          await fixture.dispose();
        }
      });

      it('restore races on client restart: re-registering an older alloc does not reorder', async () => {
        const fixture = await kind.create();
        try {
          const first = createRegistry({ storage: fixture.storage(), dispensers: { 'csi-node': echo } });
          await first.registerPlugin(nodePlugin(0));
          await first.registerPlugin(nodePlugin(1));
          assert.equal(allocOf(await first.dispensePlugin('csi-node', 'my-plugin')), 'alloc-1');
          await first.stop();

          const second = createRegistry({
            storage: await fixture.restart(),
            dispensers: { 'csi-node': echo },
          });
          let current = await second.dispensePlugin('csi-node', 'my-plugin');
          assert.equal(allocOf(current), 'alloc-1');
          assert.equal(socketOf(current), '/var/data/alloc/alloc-1/csi.sock');
          await second.registerPlugin(nodePlugin(0));
          current = await second.dispensePlugin('csi-node', 'my-plugin');
          assert.equal(allocOf(current), 'alloc-1');
          assert.equal(socketOf(current), '/var/data/alloc/alloc-1/csi.sock');
        } finally {
          await fixture.dispose();
        }
      });

      it('replacement races on host restart: a new alloc becomes current', async () => {
        const fixture = await kind.create();
        try {
          const first = createRegistry({ storage: fixture.storage() });
          await first.registerPlugin(nodePlugin(0));
          await first.registerPlugin(nodePlugin(1));
          await first.stop();
          const second = createRegistry({
            storage: await fixture.restart(),
            dispensers: { 'csi-node': echo },
          });
          await second.registerPlugin(nodePlugin(2));
          const current = await second.dispensePlugin('csi-node', 'my-plugin');
          assert.equal(allocOf(current), 'alloc-2');
          assert.equal(socketOf(current), '/var/data/alloc/alloc-2/csi.sock');
          assert.deepEqual(
            second.listInstances('csi-node', 'my-plugin').map((i) => i.allocId),
            ['alloc-2', 'alloc-1', 'alloc-0'],
          );
        } finally {
          await fixture.dispose();
        }
      });

      it('interleaved register and deregister: removing an older alloc keeps the current one', async () => {
        const fixture = await kind.create();
        try {
          const registry = createRegistry({ storage: fixture.storage(), dispensers: { 'csi-node': echo } });
          await registry.registerPlugin(nodePlugin(0));
          await registry.registerPlugin(nodePlugin(1));
          assert.equal(allocOf(await registry.dispensePlugin('csi-node', 'my-plugin')), 'alloc-1');
          await registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-0');
          assert.equal(allocOf(await registry.dispensePlugin('csi-node', 'my-plugin')), 'alloc-1');
          const restarted = createRegistry({
            storage: await fixture.restart(),
            dispensers: { 'csi-node': echo },
          });
          assert.deepEqual(
            restarted.listInstances('csi-node', 'my-plugin').map((i) => i.allocId),
            ['alloc-1'],
          );
        } finally {
          await fixture.dispose();
        }
      });
    });
  }
});

describe('registry: register', () => {
  it('validates in upstream order with upstream messages', async () => {
    const registry = createRegistry();
    const bad = (info: object) => () => registry.registerPlugin(info as PluginInstanceInfo);
    assert.throws(bad({ type: '', name: '' }), {
      code: 'BERTH_PLUGIN_INVALID',
      message: 'Plugin.Type must not be empty',
    });
    assert.throws(bad({ type: 'csi', name: '' }), {
      code: 'BERTH_PLUGIN_INVALID',
      message: 'Plugin.ConnectionInfo must not be nil',
    });
    assert.throws(bad({ type: 'csi', name: '', connectionInfo: {} }), {
      code: 'BERTH_PLUGIN_INVALID',
      message: 'Plugin.Name must not be empty',
    });
    assert.throws(bad({ type: 'csi', name: 'p', connectionInfo: {}, options: { a: 1 } }), {
      code: 'BERTH_PLUGIN_INVALID',
    });
    assert.deepEqual(registry.types(), [], 'a rejected registration leaves no trace');
    await registry.registerPlugin({ type: 'csi', name: 'p', connectionInfo: {} } as PluginInstanceInfo);
    assert.deepEqual(registry.listInstances('csi', 'p'), [
      {
        type: 'csi',
        name: 'p',
        version: '',
        connectionInfo: { socketPath: '' },
        allocId: '',
        options: {},
        registeredAt: registry.listInstances('csi', 'p')[0]?.registeredAt,
      },
    ]);
  });

  it('stamps registeredAt from the clock and ignores a caller-supplied one', async () => {
    const clock = new FakeClock(5000);
    const registry = createRegistry({ clock });
    await registry.registerPlugin(nodePlugin(0, { registeredAt: 1 }));
    assert.equal(registry.listInstances('csi-node', 'my-plugin')[0]?.registeredAt, 5000);
  });

  it('an unchanged re-register changes nothing: no event, no write, same place', async () => {
    for (const kind of storageKinds) {
      const fixture = await kind.create();
      try {
        const storage = instrumented(fixture.storage());
        const registry = createRegistry({ storage });
        const events = registry.subscribe('csi-node')[Symbol.asyncIterator]();
        await registry.registerPlugin(nodePlugin(0));
        await registry.registerPlugin(nodePlugin(1));
        await nextWithin(events, 'registered 0');
        await nextWithin(events, 'registered 1');
        const writes = storage.writes;
        const written = storage.written.length;
        await registry.registerPlugin(nodePlugin(0));
        // Two empty allocIds are the same instance too.
        await registry.registerPlugin(nodePlugin(9, { name: 'anon', allocId: '' }));
        await registry.registerPlugin(nodePlugin(9, { name: 'anon', allocId: '' }));
        assert.equal(storage.writes, writes + 1, `${kind.name}: only the new instance was written`);
        assert.deepEqual(
          storage.written.slice(written).map((c) => (c.op === 'put' ? [c.info.name, c.front] : c.op)),
          [['anon', true]],
        );
        assert.deepEqual(
          registry.listInstances('csi-node', 'my-plugin').map((i) => i.allocId),
          ['alloc-1', 'alloc-0'],
        );
        assert.equal(registry.listInstances('csi-node', 'anon').length, 1);
        const anon = await nextWithin(events, 'anon');
        assert.equal(anon.type === 'registered' ? anon.plugin.name : '', 'anon');
        await nextIsMarker(registry, events);
        await registry.stop();
      } finally {
        await fixture.dispose();
      }
    }
  });

  it('a changed re-register updates the entry in place, announces it, and persists it (nomad#11786)', async () => {
    for (const kind of storageKinds) {
      const fixture = await kind.create();
      try {
        const clock = new FakeClock(1000);
        const tapped: PluginEvent[] = [];
        const registry = createRegistry({
          storage: fixture.storage(),
          clock,
          onEvent: (e) => tapped.push(e),
        });
        const events = registry.subscribe('csi-node')[Symbol.asyncIterator]();
        await registry.registerPlugin(nodePlugin(0));
        await clock.advance(500);
        await registry.registerPlugin(nodePlugin(1));
        await clock.advance(500);
        const moved = nodePlugin(0, {
          version: 'v0.1',
          connectionInfo: { socketPath: '/elsewhere.sock' },
          options: { k: 'v' },
        });
        await registry.registerPlugin(moved);
        await nextWithin(events, 'registered 0');
        await nextWithin(events, 'registered 1');
        const updated = await nextWithin(events, 'updated');
        assert.equal(updated.type, 'updated', `${kind.name}: upstream would send nothing here`);
        if (updated.type === 'updated') {
          assert.equal(updated.plugin.connectionInfo?.socketPath, '/elsewhere.sock');
          assert.equal(updated.previous.connectionInfo?.socketPath, '/var/data/alloc/alloc-0/csi.sock');
          assert.equal(updated.plugin.registeredAt, 1000, 'keeps its first registration time');
          assert.equal(updated.at, 2000);
        }
        assert.deepEqual(
          tapped.map((e) => e.type),
          ['registered', 'registered', 'updated'],
        );
        const order = (r: Registry) =>
          r.listInstances('csi-node', 'my-plugin').map((i) => [i.allocId, i.version]);
        assert.deepEqual(order(registry), [
          ['alloc-1', 'v1'],
          ['alloc-0', 'v0.1'],
        ]);
        await registry.stop();
        const restarted = createRegistry({ storage: await fixture.restart() });
        assert.deepEqual(order(restarted), [
          ['alloc-1', 'v1'],
          ['alloc-0', 'v0.1'],
        ]);
        assert.deepEqual(restarted.pluginForAlloc('csi-node', 'my-plugin', 'alloc-0').options, { k: 'v' });
      } finally {
        await fixture.dispose();
      }
    }
  });

  it('a failed write is not applied: refused, not listed, not announced, reported; health recovers by itself', async () => {
    const logs: LogRecord[] = [];
    const tapped: PluginEvent[] = [];
    const fixture = await storageKinds[1]?.create();
    assert.ok(fixture);
    try {
      const clock = new FakeClock(10_000);
      const storage = instrumented(fixture.storage());
      const registry = createRegistry({
        storage,
        clock,
        logger: createRecordingLogger(logs),
        onEvent: (e) => tapped.push(e),
        storageRetry: { initialMs: 500, maxMs: 4000, factor: 2 },
      });
      const events = registry.subscribe(undefined)[Symbol.asyncIterator]();
      storage.failWrites = 'disk full';
      await assert.rejects(registry.registerPlugin(nodePlugin(0)), {
        code: 'BERTH_STORAGE_FAILED',
        message: /disk full/,
      });
      assert.equal(registry.listPlugins('csi-node'), undefined, 'not listed, and the type is not even known');
      assert.deepEqual(
        tapped.map((e) => e.type),
        ['storage-error'],
        'nothing announced but the failure',
      );
      const storageError = tapped[0];
      assert.equal(
        storageError?.type === 'storage-error' ? storageError.error.code : '',
        'BERTH_STORAGE_FAILED',
      );
      assert.ok(logs.some((l) => l.level === 'error' && l.fields.code === 'BERTH_STORAGE_FAILED'));
      assert.deepEqual(registry.storageHealth(), {
        state: 'failing',
        failures: 1,
        since: 10_000,
        lastError: {
          code: 'BERTH_STORAGE_FAILED',
          message: 'failed to persist dynamic plugin registry changes: disk full',
        },
        pendingDeletes: 0,
        retryAt: 10_500,
      });
      // The retry (a probe) fails too while the disk is still full; the backoff doubles.
      await clock.advance(500);
      await waitFor('second failure', () => registry.storageHealth().failures === 2);
      assert.equal((registry.storageHealth() as { retryAt?: number }).retryAt, 11_500);
      storage.failWrites = undefined;
      await clock.advance(1000);
      await waitFor('recovered', () => registry.storageHealth().state === 'ok');
      assert.deepEqual(registry.storageHealth(), { state: 'ok', failures: 2 });
      assert.ok(logs.some((l) => l.level === 'info' && /works again/.test(l.message)));
      // The plugin manager retries the registration: now it lands, and is the first thing announced.
      await registry.registerPlugin(nodePlugin(0));
      const first = await nextWithin(events, 'registered');
      assert.equal(first.type === 'registered' ? first.plugin.allocId : '', 'alloc-0');
      const writes = storage.writes;
      await registry.registerPlugin(nodePlugin(0));
      assert.equal(storage.writes, writes, 'once saved, an unchanged re-register writes nothing');
      await registry.stop();
      const restarted = createRegistry({ storage: await fixture.restart() });
      await restarted.start();
      assert.equal(restarted.listPlugins('csi-node')?.[0]?.allocId, 'alloc-0');
    } finally {
      await fixture.dispose();
    }
  });

  it('a throwing onEvent tap does not break registration', async () => {
    const logs: LogRecord[] = [];
    const registry = createRegistry({
      logger: createRecordingLogger(logs),
      onEvent: () => {
        throw new Error('tap broke');
      },
    });
    await registry.registerPlugin(nodePlugin(0));
    assert.equal(registry.listPlugins('csi-node')?.length, 1);
    assert.ok(logs.some((l) => l.level === 'error' && l.fields.err === 'tap broke'));
  });
});

describe('registry: deregister', () => {
  it('validates its arguments and knows unknown types', async () => {
    const registry = createRegistry();
    assert.throws(() => registry.deregisterPlugin('', 'n', 'a'), {
      code: 'BERTH_INVALID_ARGUMENT',
      message: 'must specify plugin type to deregister',
    });
    assert.throws(() => registry.deregisterPlugin('t', '', 'a'), {
      message: 'must specify plugin name to deregister',
    });
    assert.throws(() => registry.deregisterPlugin('t', 'n', ''), {
      message: 'must specify plugin allocation ID to deregister',
    });
    await assert.rejects(registry.deregisterPlugin('t', 'n', 'a'), {
      code: 'BERTH_NO_PLUGINS_FOR_TYPE',
      message: 'no plugins registered for type: t',
    });
  });

  it('an unknown name or a missing allocId is a no-op with no event and no write', async () => {
    const storage = instrumented((await storageKinds[0]?.create())?.storage() ?? assert.fail());
    const registry = createRegistry({ storage });
    const events = registry.subscribe('csi-node')[Symbol.asyncIterator]();
    await registry.registerPlugin(nodePlugin(0));
    await nextWithin(events, 'registered');
    const writes = storage.writes;
    await registry.deregisterPlugin('csi-node', 'nobody', 'alloc-0');
    // Upstream would announce "deregistered alloc-0" here although alloc-0 is still registered.
    await registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-1');
    assert.equal(storage.writes, writes);
    assert.equal(registry.listPlugins('csi-node')?.[0]?.allocId, 'alloc-0');
    await nextIsMarker(registry, events);
  });

  it('removing the current instance makes the next-newest current; removing the last hides the name', async () => {
    const registry = createRegistry({ dispensers: { 'csi-node': echo } });
    await registry.registerPlugin(nodePlugin(0));
    await registry.registerPlugin(nodePlugin(1));
    await registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-1');
    assert.equal(allocOf(await registry.dispensePlugin('csi-node', 'my-plugin')), 'alloc-0');
    await registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-0');
    assert.deepEqual(registry.listPlugins('csi-node'), []);
    assert.deepEqual(registry.listInstances('csi-node', 'my-plugin'), []);
    await assert.rejects(registry.dispensePlugin('csi-node', 'my-plugin'), {
      message: 'plugin my-plugin for type csi-node not found',
    });
    assert.throws(() => registry.pluginForAlloc('csi-node', 'my-plugin', 'alloc-0'), {
      code: 'BERTH_NO_PLUGIN_FOR_ALLOC',
      message: 'no plugin for that allocation',
    });
    assert.deepEqual(registry.types(), ['csi-node'], 'the type stays known');
  });
});

describe('registry: reads', () => {
  it('listPlugins: undefined for an unknown type, the current instance per name otherwise', async () => {
    const registry = createRegistry();
    assert.equal(registry.listPlugins('csi-node'), undefined);
    await registry.registerPlugin(nodePlugin(0));
    await registry.registerPlugin(nodePlugin(1));
    await registry.registerPlugin(nodePlugin(2, { name: 'b-plugin' }));
    const listed = registry.listPlugins('csi-node') ?? [];
    assert.deepEqual(listed.map((i) => [i.name, i.allocId]).sort(), [
      ['b-plugin', 'alloc-2'],
      ['my-plugin', 'alloc-1'],
    ]);
    assert.deepEqual(registry.types(), ['csi-node']);
  });

  it('hands out copies', async () => {
    const registry = createRegistry();
    await registry.registerPlugin(nodePlugin(0, { options: { a: 'b' } }));
    const [listed] = registry.listPlugins('csi-node') ?? [];
    assert.ok(listed?.connectionInfo);
    listed.options.a = 'changed';
    listed.connectionInfo.socketPath = 'changed';
    const again = registry.pluginForAlloc('csi-node', 'my-plugin', 'alloc-0');
    assert.equal(again.options.a, 'b');
    assert.equal(again.connectionInfo?.socketPath, '/var/data/alloc/alloc-0/csi.sock');
  });

  it('pluginForAlloc finds non-current instances and reports its two errors', async () => {
    const registry = createRegistry();
    await registry.registerPlugin(nodePlugin(0));
    await registry.registerPlugin(nodePlugin(1));
    assert.equal(registry.pluginForAlloc('csi-node', 'my-plugin', 'alloc-0').version, 'v0');
    assert.equal(registry.pluginForInstance('csi-node', 'my-plugin', 'alloc-1').version, 'v1');
    assert.throws(() => registry.pluginForAlloc('csi-controller', 'my-plugin', 'alloc-0'), {
      code: 'BERTH_NO_PLUGINS_FOR_TYPE',
      message: 'no plugins registered for type: csi-controller',
    });
    assert.throws(() => registry.pluginForAlloc('csi-node', 'other', 'alloc-0'), {
      message: 'no plugin for that allocation',
    });
    assert.throws(() => registry.pluginForAlloc('csi-node', 'my-plugin', 'alloc-9'), {
      message: 'no plugin for that allocation',
    });
  });
});

describe('registry: dispense', () => {
  it('checks arguments, then the dispenser, then the type, then the name', async () => {
    const registry = createRegistry({ dispensers: { csi: echo } });
    await assert.rejects(registry.dispensePlugin('', 'x'), {
      code: 'BERTH_INVALID_ARGUMENT',
      message: 'must specify plugin type to dispense',
    });
    await assert.rejects(registry.dispensePlugin('csi', ''), {
      message: 'must specify plugin name to dispense',
    });
    await assert.rejects(registry.dispensePlugin('csi', 'x'), {
      code: 'BERTH_NO_PLUGINS_FOR_TYPE',
      message: 'no plugins registered for type: csi',
    });
  });

  it('a stub overrides only a real dispenser, and removing it restores the real one', async () => {
    const registry = createRegistry({ dispensers: { 'csi-node': () => 'real' } });
    await registry.registerPlugin(nodePlugin(0));
    await registry.registerPlugin(nodePlugin(0, { type: 'other' }));
    registry.stubDispenserForType('csi-node', () => 'stub');
    registry.stubDispenserForType('other', () => 'stub');
    assert.equal(await registry.dispensePlugin('csi-node', 'my-plugin'), 'stub');
    await assert.rejects(registry.dispensePlugin('other', 'my-plugin'), {
      message: 'no plugin dispenser found for type: other',
    });
    registry.stubDispenserForType('csi-node', undefined);
    assert.equal(await registry.dispensePlugin('csi-node', 'my-plugin'), 'real');
  });

  it('uses the default dispenser for types without their own', async () => {
    const registry = createRegistry({
      dispensers: { 'csi-node': () => 'node' },
      defaultDispenser: () => 'default',
    });
    await registry.registerPlugin(nodePlugin(0));
    await registry.registerPlugin(nodePlugin(0, { type: 'device' }));
    assert.equal(await registry.dispensePlugin('csi-node', 'my-plugin'), 'node');
    assert.equal(await registry.dispensePlugin('device', 'my-plugin'), 'default');
  });

  it('a slow dispenser blocks nothing else, and gets a copy of the current instance', async () => {
    let release: (value: string) => void = () => {};
    let seen: PluginInstanceInfo | undefined;
    const registry = createRegistry({
      dispensers: {
        'csi-node': (info) => {
          seen = info;
          return new Promise<string>((resolve) => {
            release = resolve;
          });
        },
      },
    });
    await registry.registerPlugin(nodePlugin(0));
    const pending = registry.dispensePlugin('csi-node', 'my-plugin');
    await registry.registerPlugin(nodePlugin(1));
    await registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-0');
    assert.equal(registry.listPlugins('csi-node')?.[0]?.allocId, 'alloc-1');
    assert.ok(seen);
    seen.allocId = 'tampered';
    assert.equal(registry.listInstances('csi-node', 'my-plugin')[0]?.allocId, 'alloc-1');
    release('client');
    assert.equal(await pending, 'client');
  });

  it('passes a dispenser failure through', async () => {
    const registry = createRegistry({
      dispensers: {
        'csi-node': () => {
          throw new Error('cannot connect');
        },
      },
    });
    await registry.registerPlugin(nodePlugin(0));
    await assert.rejects(registry.dispensePlugin('csi-node', 'my-plugin'), { message: 'cannot connect' });
  });
});
