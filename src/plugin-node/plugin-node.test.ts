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

describe('plugin node with the built-in handlers (what the daemon runs)', () => {
  it('builds, starts and stops the built-in handlers, versioned handlers and one gRPC dispenser from its options', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const events: PluginEvent[] = [];
    const node = createPluginNode({
      pluginsDir: dir.join('plugins'),
      liveness: false,
      builtinHandlers: { dataDir: dir.join('data'), options: { DRAPlugin: { maxClaimsPerCall: 7 } } },
      handlerVersions: { 'example.com/versioned': ['v1beta1'] },
      grpcDispenser: true,
      onEvent: (event) => events.push(event),
    });
    t.after(() => node.stop());
    assert.equal(
      node.builtin,
      undefined,
      'the built-in handlers load at start, not at import or construction',
    );
    assert.deepEqual(node.handlerTypes, [
      'CSIPlugin',
      'csi-controller',
      'DevicePlugin',
      'DRAPlugin',
      'example.com/versioned',
    ]);
    await node.start();
    const builtin = (node as PluginNode).builtin;
    assert.ok(builtin !== undefined);
    assert.equal(builtin.CSIPlugin.state, 'running');
    assert.equal(
      builtin.DRAPlugin.options.maxClaimsPerCall,
      7,
      'each type gets its own handlerOptions section',
    );
    assert.deepEqual(node.manager.handlerTypes().sort(), [...node.handlerTypes].sort());

    // A versioned type registers a plugin that speaks an accepted version, and the gRPC dispenser serves it.
    const accepted = createExamplePlugin({
      socketPath: dir.join('plugins', 'ok.sock'),
      name: 'ok',
      type: 'example.com/versioned',
      versions: ['v1beta1'],
    });
    t.after(() => accepted.stop());
    await accepted.start();
    assert.deepEqual(await accepted.nextStatus(), { pluginRegistered: true, error: '' });
    await waitFor(
      'the registry to list it',
      () => node.registry.listPlugins('example.com/versioned')?.length === 1,
    );
    // A reload's new version list applies to later registrations.
    node.setHandlerVersions('example.com/versioned', ['v2']);
    const refused = createExamplePlugin({
      socketPath: dir.join('plugins', 'old.sock'),
      name: 'old',
      type: 'example.com/versioned',
      versions: ['v1beta1'],
    });
    t.after(() => refused.stop());
    await refused.start();
    assert.equal((await refused.nextStatus()).pluginRegistered, false);

    await node.stop();
    assert.equal(builtin.CSIPlugin.state, 'stopped', 'the node stops the handlers it built');
    assert.equal(builtin.DRAPlugin.state, 'stopped');
  });
});
