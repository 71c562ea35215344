import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { PluginEvent } from '../common/index.js';
import { createExamplePlugin, type ExamplePlugin } from '../registration/index.js';
import { createSqliteStorage } from '../storage/index.js';
import { createTempDir, type TempDir, waitFor } from '../testing/index.js';
import { createPluginNode, type PluginNode } from './plugin-node.js';

const TYPE = 'DevicePlugin';

function startNode(t: TestContext, dir: TempDir, events: PluginEvent[] = []) {
  const storage = createSqliteStorage({ path: dir.join('state.db') });
  const node = createPluginNode({
    pluginsDir: dir.join('plugins'),
    storage,
    handlers: { [TYPE]: (registry) => registry },
    liveness: false,
    onEvent: (event) => events.push(event),
  });
  t.after(async () => {
    await node.stop();
    await storage.stop();
  });
  return { node, storage, events };
}

async function startPlugin(t: TestContext, dir: TempDir, name: string): Promise<ExamplePlugin> {
  const plugin = createExamplePlugin({
    socketPath: dir.join('plugins', `${name}.sock`),
    name,
    type: TYPE,
    versions: ['v1'],
  });
  t.after(() => plugin.stop());
  await plugin.start();
  return plugin;
}

const names = (node: PluginNode) => (node.registry.listPlugins(TYPE) ?? []).map((p) => p.name);

describe('plugin node (library facade)', () => {
  it('restart: a restored plugin whose socket is back causes no deregister/register pair; a gone one is removed after the first scan', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());

    // First life: two plugins register and are persisted.
    const first = startNode(t, dir);
    await first.node.start();
    assert.equal(first.node.state, 'running');
    const keep = await startPlugin(t, dir, 'keep');
    const gone = await startPlugin(t, dir, 'gone');
    await waitFor('both registered', () => names(first.node).length === 2);
    assert.deepEqual(await keep.nextStatus(), { pluginRegistered: true, error: '' });
    await first.node.stop();
    await first.storage.stop();
    assert.equal(first.node.state, 'stopped');

    // While berth is down, one plugin goes away (its socket file with it).
    await gone.stop();

    const events: PluginEvent[] = [];
    const second = startNode(t, dir, events);
    // The storage opens, and the registry restores both instances, at start.
    await second.node.start();

    // When start resolves the registry holds exactly the live plugin.
    assert.deepEqual(names(second.node), ['keep']);
    assert.deepEqual(
      second.node.droppedAtStart.map((p) => p.name),
      ['gone'],
    );
    const changes = events.filter(
      (e) => e.type === 'registered' || e.type === 'deregistered' || e.type === 'updated',
    );
    assert.deepEqual(
      changes.map((e) => `${e.type} ${'plugin' in e ? e.plugin.name : ''}`),
      ['deregistered gone'],
      'the live plugin was confirmed in place: no deregistered/registered pair',
    );
    // It was confirmed by a real handshake, not merely trusted.
    assert.deepEqual(await keep.nextStatus(), { pluginRegistered: true, error: '' });
    assert.equal(second.node.manager.socket(keep.socketPath)?.state, 'registered');
  });

  it('follows the lifecycle contract: stop before start, double stop, dispose after stop', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const { node } = startNode(t, dir);
    assert.equal(node.state, 'new');
    await node.stop();
    await node.stop();
    assert.equal(node.state, 'stopped');
    await node[Symbol.asyncDispose]();
    await assert.rejects(node.start(), /stopped/);

    const other = startNode(t, createTempDirFor(t));
    await other.node.start();
    const stopping = other.node.stop();
    assert.equal(other.node.stop(), stopping, 'stop is memoised');
    await stopping;
    assert.equal(other.node.state, 'stopped');
  });

  it('refuses a bad restore settle timeout clearly', (t) => {
    const dir = createTempDirFor(t);
    assert.throws(
      () => createPluginNode({ pluginsDir: dir.join('plugins'), restoreSettleTimeoutMs: 0 }),
      /restoreSettleTimeoutMs must be a positive number/,
    );
  });
});

function createTempDirFor(t: TestContext): TempDir {
  const dir = createTempDir();
  t.after(() => dir.remove());
  return dir;
}
