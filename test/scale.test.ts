/**
 * Scale behaviour against plugins served by a separate process (the plugin
 * farm, src/testing/harness/plugin-farm.ts): every socket binds before it listens,
 * as real gRPC servers do, and counts the GetInfo and Notify calls it gets.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { PluginEvent } from '../src/common/index.js';
import type { PluginHandler } from '../src/handlers/index.js';
import {
  createPluginManager,
  type PluginManagerEvent,
  type PluginManagerOptions,
} from '../src/plugin-manager/index.js';
import { createPluginNode } from '../src/plugin-node/index.js';
import { createSqliteStorage } from '../src/storage/index.js';
import { type PluginFarm, startPluginFarm } from '../src/testing/harness/index.js';
import { createTempDir, type TempDir, waitFor } from '../src/testing/index.js';

const TYPE = 'BenchPlugin';
const accept: PluginHandler = {
  validatePlugin() {},
  registerPlugin() {},
  deRegisterPlugin() {},
};

async function farmAndDir(t: TestContext): Promise<{ farm: PluginFarm; dir: TempDir; pluginsDir: string }> {
  const dir = createTempDir();
  const farm = await startPluginFarm();
  t.after(async () => {
    await farm.stop();
    dir.remove();
  });
  return { farm, dir, pluginsDir: dir.join('plugins') };
}

function manager(t: TestContext, pluginsDir: string, options: Partial<PluginManagerOptions> = {}) {
  const events: PluginManagerEvent[] = [];
  const pm = createPluginManager({ pluginsDir, liveness: false, onEvent: (e) => events.push(e), ...options });
  pm.addHandler(TYPE, accept);
  t.after(() => pm.stop());
  return { pm, events };
}

const paths = (dir: string, n: number) =>
  Array.from({ length: n }, (_, i) => join(dir, `p${String(i).padStart(5, '0')}.sock`));

describe('scale: plugins served by a separate process', () => {
  it('a storm of 500 sockets registers every plugin with exactly one GetInfo and one Notify(true) each', async (t) => {
    const { farm, pluginsDir } = await farmAndDir(t);
    const { pm, events } = manager(t, pluginsDir);
    await pm.start();
    const storm = paths(pluginsDir, 500);
    await farm.serve(storm);
    // 'plugin-registered' comes once the Notify(true) was answered; the actual state takes a
    // plugin before its handler's register and the Notify (as the kubelet's does).
    const registered = () => events.filter((e) => e.type === 'plugin-registered').length;
    await waitFor('all 500 registered and told so', () => registered() === 500, { timeoutMs: 120_000 });
    const { sockets } = await farm.stats();
    assert.equal(sockets.length, 500);
    for (const socket of sockets) {
      assert.deepEqual(
        { getInfo: socket.getInfo, notifyTrue: socket.notifyTrue, notifyFalse: socket.notifyFalse },
        { getInfo: 1, notifyTrue: 1, notifyFalse: 0 },
        socket.path,
      );
    }
    assert.deepEqual(
      events.filter((e) => e.type === 'failed'),
      [],
      'no attempt failed (no refused dial went into backoff)',
    );
  });

  it('a plugin that binds, waits 20 ms, then listens registers on its first generation with no backoff', async (t) => {
    const { farm, pluginsDir } = await farmAndDir(t);
    const { pm, events } = manager(t, pluginsDir);
    await pm.start();
    const [path] = paths(pluginsDir, 1) as [string];
    await farm.serve([path], { gapMs: 20 });
    await waitFor('registered', () => pm.socket(path)?.state === 'registered', { timeoutMs: 30_000 });
    const status = pm.socket(path);
    assert.equal(status?.attempts, 1, 'registered by the first attempt of the first generation');
    assert.equal(status?.retryAt, undefined, 'no backoff entry');
    assert.equal(status?.lastError, undefined);
    assert.equal(
      pm.sockets().filter((s) => s.socketPath === path).length,
      1,
      'one generation of the socket, as /v1/sockets lists it',
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'failed'),
      [],
    );
    const [stats] = (await farm.stats()).sockets;
    assert.equal(stats?.getInfo, 1);
    assert.equal(stats?.notifyTrue, 1);
  });

  it('a start-up with 500 sockets present tells each plugin Notify(true) exactly once', async (t) => {
    const { farm, dir, pluginsDir } = await farmAndDir(t);
    const present = paths(pluginsDir, 500);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(pluginsDir, { recursive: true });
    await farm.serve(present);
    const storage = createSqliteStorage({ path: dir.join('state.db') });
    const events: PluginEvent[] = [];
    const node = createPluginNode({
      pluginsDir,
      storage,
      handlers: { [TYPE]: (registry) => registry },
      liveness: false,
      onEvent: (e) => events.push(e),
    });
    t.after(async () => {
      await node.stop();
      await storage.stop();
    });
    await node.start();
    // The registry lists a plugin before its Notify(true) (the write that Notify waits for), so
    // wait until the registry lists all and every plugin has heard.
    await waitFor(
      'all 500 listed by the registry and told so',
      async () =>
        (node.registry.listPlugins(TYPE) ?? []).length === 500 &&
        (await farm.stats()).sockets.filter((s) => s.notifyTrue > 0).length === 500,
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    const { sockets } = await farm.stats();
    const told = sockets.map((s) => s.notifyTrue);
    assert.equal(told.length, 500);
    assert.deepEqual(
      sockets.filter((s) => s.notifyTrue !== 1 || s.notifyFalse !== 0).map((s) => s.path),
      [],
      'every plugin was told registered exactly once and never told it failed',
    );
    // A Notify(true) that berth gave up on would be rolled back (BERTH_NOTIFY_FAILED, a
    // deregistration) and retried: the plugin would hear "registered" twice.
    assert.deepEqual(
      events.filter(
        (e) => e.type === 'deregistered' || (e.type === 'failed' && e.error.code === 'BERTH_NOTIFY_FAILED'),
      ),
      [],
      'no registration was rolled back',
    );
  });
});
