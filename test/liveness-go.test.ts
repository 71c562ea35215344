/**
 * Liveness on grpc-go plugins (the Go plugin farm: one grpc.Server per
 * socket, Debian's grpc-go): the handshake's connection is the one liveness
 * holds; pings on it are answered; a plugin that drops it, or that grpc-go's
 * ping policy makes close it (GOAWAY "too_many_pings" after a few pings with
 * no call in between), is connected to again without a new registration.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { startGoPluginFarm } from '../bench/lib/go-farm.js';
import { silentLogger } from '../src/common/index.js';
import {
  createLivenessProber,
  createPluginManager,
  type PluginManagerEvent,
} from '../src/plugin-manager/index.js';
import { dialRegistration } from '../src/registration/index.js';
import { createTempDir, FakeClock, waitFor } from '../src/testing/index.js';
import { requireGo } from './fixtures/go-peers.js';

const accepting = {
  validatePlugin: async () => {},
  registerPlugin: async () => {},
  deRegisterPlugin: async () => {},
};

/** The plugins listen before the manager starts, so each registers on its first dial (no probe connections). */
async function setup(t: TestContext, names: string[]) {
  const dir = createTempDir();
  const farm = await startGoPluginFarm();
  mkdirSync(dir.join('plugins'));
  const paths = names.map((name) => join(dir.join('plugins'), `${name}.sock`));
  await farm.serve(paths, { type: 'BenchPlugin' });
  const events: PluginManagerEvent[] = [];
  const manager = createPluginManager({
    pluginsDir: dir.join('plugins'),
    liveness: { periodMs: 60_000, timeoutMs: 2_000, failureThreshold: 2 },
    onEvent: (event) => events.push(event),
  });
  manager.addHandler('BenchPlugin', accepting);
  t.after(async () => {
    await manager.stop();
    await farm.stop();
    dir.remove();
  });
  await manager.start();
  const stats = async (path: string) => {
    const found = (await farm.stats()).sockets.find((s) => s.path === path);
    assert.ok(found, `the farm serves ${path}`);
    return found;
  };
  return { paths, farm, manager, events, stats };
}

describe('liveness against grpc-go plugins', () => {
  it('probes many times over one connection: grpc-go does not close it for too many pings', async (t) => {
    if (!requireGo(t)) return;
    const dir = createTempDir();
    const farm = await startGoPluginFarm();
    t.after(async () => {
      await farm.stop();
      dir.remove();
    });
    const dead: string[] = [];
    const prober = createLivenessProber({
      periodMs: 60_000,
      timeoutMs: 2_000,
      failureThreshold: 1,
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
    assert.ok(held);
    prober.adopt(socketPath, 'gen-1', held);
    prober.watch({ socketPath, timestamp: 1, uuid: 'gen-1', foundInDeprecatedDir: false, name: 'p' });
    // With PINGs alone, grpc-go sends GOAWAY "too_many_pings" at the fourth.
    for (let i = 0; i < 12; i++) await prober.probeAll();
    assert.deepEqual(dead, []);
    const [stats] = (await farm.stats()).sockets;
    assert.deepEqual([stats?.connections, stats?.openConnections], [1, 1], 'still the handshake connection');
    assert.equal(stats?.getInfo, 1, 'the probes are not GetInfo calls');
  });

  it('holds the handshake connection: one connection per plugin, one GetInfo, one Notify(true)', async (t) => {
    if (!requireGo(t)) return;
    const { paths, manager, stats } = await setup(t, ['a', 'b', 'c', 'd']);
    await waitFor('all registered', () => manager.actualState.getRegisteredPlugins().length === paths.length);
    for (const path of paths) {
      await waitFor(`${path} held open`, async () => (await stats(path)).openConnections === 1);
      const s = await stats(path);
      assert.deepEqual([s.connections, s.getInfo, s.notifyTrue], [1, 1, 1], path);
    }
  });

  it('a dropped connection is replaced by a new one, and the plugin stays registered without a new handshake', async (t) => {
    if (!requireGo(t)) return;
    const { paths, farm, manager, events, stats } = await setup(t, ['p']);
    const path = paths[0] as string;
    await waitFor('registered', () => manager.actualState.getRegisteredPlugins().length === 1);
    await waitFor('held', async () => (await stats(path)).openConnections === 1);
    await farm.dropConnections([path]);
    // Liveness probes the socket (a connection the farm may count too), finds it answering, and connects again.
    await waitFor('connected again', async () => {
      const s = await stats(path);
      return s.connections >= 2 && s.openConnections === 1;
    });
    assert.equal(manager.actualState.getRegisteredPlugins().length, 1);
    assert.equal((await stats(path)).getInfo, 1, 'no new GetInfo');
    assert.equal(events.filter((e) => e.type === 'failed' || e.type === 'plugin-deregistered').length, 0);
  });
});
