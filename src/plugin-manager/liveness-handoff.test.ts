/**
 * A registered plugin's handshake connection becomes its liveness connection:
 * one connection per plugin, not two (issue 20). Plugins run in a separate
 * process (the harness's plugin farm) that counts the connections each socket
 * accepts.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { silentLogger } from '../common/index.js';
import type { PluginHandler } from '../handlers/types.js';
import { dialRegistration } from '../registration/index.js';
import { startPluginFarm } from '../testing/harness/index.js';
import { createTempDir, FakeClock, waitFor } from '../testing/index.js';
import { createPluginManager } from './index.js';
import { createLivenessProber } from './liveness.js';
import type { PluginManagerEvent } from './types.js';

const accepting: PluginHandler = {
  validatePlugin: async () => {},
  registerPlugin: async () => {},
  deRegisterPlugin: async () => {},
};

/**
 * The plugins listen before the manager starts, so each registers on its
 * first dial (a dial into a bind -> listen gap adds probe connections, which
 * the farm counts too).
 */
async function setup(t: TestContext, liveness: boolean, names: string[]) {
  const dir = createTempDir();
  const farm = await startPluginFarm();
  mkdirSync(dir.join('plugins'));
  const paths = names.map((name) => join(dir.join('plugins'), `${name}.sock`));
  await farm.serve(paths, { type: 'BenchPlugin' });
  const events: PluginManagerEvent[] = [];
  const manager = createPluginManager({
    pluginsDir: dir.join('plugins'),
    liveness: liveness ? { periodMs: 60_000, timeoutMs: 2_000, failureThreshold: 3 } : false,
    onEvent: (event) => events.push(event),
  });
  manager.addHandler('BenchPlugin', accepting);
  t.after(async () => {
    await manager.stop();
    await farm.stop();
    dir.remove();
  });
  await manager.start();
  const socketStats = async (path: string) => {
    const { sockets } = await farm.stats();
    const found = sockets.find((s) => s.path === path);
    assert.ok(found, `the farm serves ${path}`);
    return found;
  };
  return { paths, farm, manager, events, socketStats };
}

describe('liveness holds the handshake connection', () => {
  it('a registered plugin has one connection, kept open, and liveness pings on it', async (t) => {
    const { paths, manager, socketStats } = await setup(t, true, ['a', 'b', 'c']);
    await waitFor('all three registered', () => manager.actualState.getRegisteredPlugins().length === 3);
    for (const path of paths) {
      const stats = await socketStats(path);
      assert.equal(stats.getInfo, 1);
      assert.equal(stats.notifyTrue, 1);
      // The handshake's connection stayed open for liveness; nothing else connected.
      await waitFor(
        `${path}: one open connection`,
        async () => (await socketStats(path)).openConnections === 1,
      );
      assert.equal((await socketStats(path)).connections, 1, 'no second connection for liveness');
    }
  });

  it('pings go over an adopted connection: answered while the plugin runs, failing once it is stopped', async (t) => {
    const dir = createTempDir();
    const farm = await startPluginFarm();
    t.after(async () => {
      try {
        process.kill(farm.pid, 'SIGCONT');
      } catch {
        // already gone
      }
      await farm.stop();
      dir.remove();
    });
    const dead: string[] = [];
    const prober = createLivenessProber({
      periodMs: 60_000,
      timeoutMs: 200,
      failureThreshold: 2,
      clock: new FakeClock(),
      logger: silentLogger,
      dial: dialRegistration,
      isBusy: () => false,
      onDead: (plugin) => dead.push(plugin.socketPath),
    });
    t.after(() => prober.stop());
    await prober.start();
    const socketPath = dir.join('p.sock');
    await farm.serve([socketPath], { type: 'BenchPlugin' });
    const conn = await dialRegistration(socketPath, { timeoutMs: 5_000 });
    await conn.getInfo({ timeoutMs: 5_000 });
    const held = conn.hold?.();
    assert.ok(held, 'a fresh handshake connection can be held');
    conn.close(); // a no-op once held
    prober.adopt(socketPath, 'gen-1', held);
    prober.watch({ socketPath, timestamp: 1, uuid: 'gen-1', foundInDeprecatedDir: false, name: 'p' });
    await prober.probeAll();
    await prober.probeAll();
    assert.deepEqual(dead, [], 'pings on the held connection are answered');
    const { sockets } = await farm.stats();
    assert.deepEqual(
      sockets.map((s) => [s.connections, s.openConnections]),
      [[1, 1]],
      'one connection: the handshake one',
    );
    process.kill(farm.pid, 'SIGSTOP');
    await prober.probeAll();
    await prober.probeAll();
    assert.deepEqual(dead, [socketPath], 'a stopped plugin fails its pings on that connection');
  });

  it('an adopted connection nobody watches is closed at stop', async (t) => {
    const dir = createTempDir();
    const farm = await startPluginFarm();
    t.after(async () => {
      await farm.stop();
      dir.remove();
    });
    const prober = createLivenessProber({
      periodMs: 60_000,
      timeoutMs: 200,
      failureThreshold: 2,
      clock: new FakeClock(),
      logger: silentLogger,
      dial: dialRegistration,
      isBusy: () => false,
      onDead: () => {},
    });
    await prober.start();
    const socketPath = dir.join('p.sock');
    await farm.serve([socketPath], { type: 'BenchPlugin' });
    const conn = await dialRegistration(socketPath, { timeoutMs: 5_000 });
    await conn.getInfo({ timeoutMs: 5_000 });
    const held = conn.hold?.();
    assert.ok(held);
    prober.adopt(socketPath, 'gen-1', held);
    await prober.stop();
    await waitFor('the farm sees the connection closed', async () => {
      const { sockets } = await farm.stats();
      return sockets[0]?.openConnections === 0;
    });
  });

  it('the plugin closing that connection is noticed: the socket still answers, so liveness connects again', async (t) => {
    const { paths, farm, manager, socketStats } = await setup(t, true, ['p']);
    const path = paths[0] as string;
    await waitFor('registered', () => manager.actualState.getRegisteredPlugins().length === 1);
    await waitFor('held', async () => (await socketStats(path)).openConnections === 1);
    await farm.dropConnections([path]);
    // Liveness probes the socket (a connection the farm may count too), finds it answering, and connects again.
    await waitFor('a new liveness connection', async () => {
      const stats = await socketStats(path);
      return stats.connections >= 2 && stats.openConnections === 1;
    });
    assert.equal(manager.actualState.getRegisteredPlugins().length, 1, 'still registered');
    assert.equal((await socketStats(path)).getInfo, 1, 'no new handshake');
  });

  it('with liveness off the handshake connection is closed, as the kubelet closes it', async (t) => {
    const { paths, manager, socketStats } = await setup(t, false, ['q']);
    const path = paths[0] as string;
    await waitFor('registered', () => manager.actualState.getRegisteredPlugins().length === 1);
    await waitFor('the connection closed', async () => (await socketStats(path)).openConnections === 0);
    assert.equal((await socketStats(path)).connections, 1);
  });
});
