/**
 * A registered plugin's handshake connection becomes its liveness connection
 * (issue 20): one connection per plugin, not two. Every case runs against
 * both plugin farms, each a separate process that counts the connections its
 * sockets accept: the Node farm (node:http2) and the Go farm (grpc-go, one
 * grpc.Server per socket, as real plugins are built).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it, type TestContext } from 'node:test';
import { silentLogger } from '../src/common/index.js';
import {
  createLivenessProber,
  createPluginManager,
  type PluginManagerEvent,
} from '../src/plugin-manager/index.js';
import { dialRegistration } from '../src/registration/index.js';
import { FakeClock, waitFor } from '../src/testing/index.js';
import { FARM_KINDS, type FarmKind, openFarm } from './fixtures/plugin-farms.js';

const accepting = {
  validatePlugin: async () => {},
  registerPlugin: async () => {},
  deRegisterPlugin: async () => {},
};

/**
 * A plugin manager over plugins that listen before it starts, so each
 * registers on its first dial (a dial into a bind -> listen gap adds probe
 * connections, which the farms count too).
 */
async function managerOver(t: TestContext, kind: FarmKind, names: string[], liveness = true) {
  const opened = await openFarm(t, kind);
  if (opened === undefined) return undefined;
  const paths = await opened.serve(names);
  const events: PluginManagerEvent[] = [];
  const manager = createPluginManager({
    pluginsDir: opened.dir.join('plugins'),
    liveness: liveness ? { periodMs: 60_000, timeoutMs: 2_000, failureThreshold: 3 } : false,
    onEvent: (event) => events.push(event),
  });
  manager.addHandler('BenchPlugin', accepting);
  t.after(() => manager.stop());
  await manager.start();
  // 'plugin-registered' follows the Notify(true) and the hand-over of the connection to liveness.
  await waitFor(
    'all registered and told so',
    () => events.filter((e) => e.type === 'plugin-registered').length === names.length,
  );
  return { ...opened, paths, manager, events };
}

/** A liveness prober holding the handshake connection of one plugin, handed over as the register path does. */
async function proberOnHandshake(t: TestContext, kind: FarmKind, failureThreshold: number) {
  const opened = await openFarm(t, kind);
  if (opened === undefined) return undefined;
  const dead: string[] = [];
  const prober = createLivenessProber({
    periodMs: 60_000,
    timeoutMs: 500,
    failureThreshold,
    clock: new FakeClock(),
    logger: silentLogger,
    dial: dialRegistration,
    isBusy: () => false,
    onDead: (plugin) => dead.push(plugin.socketPath),
  });
  t.after(() => prober.stop());
  await prober.start();
  const [socketPath] = (await opened.serve(['p'])) as [string];
  const conn = await dialRegistration(socketPath, { timeoutMs: 5_000 });
  await conn.getInfo({ timeoutMs: 5_000 });
  const held = conn.hold?.();
  assert.ok(held, 'a fresh handshake connection can be held');
  conn.close(); // a no-op once held
  prober.adopt(socketPath, 'gen-1', held);
  return { ...opened, prober, dead, socketPath };
}

/**
 * SIGSTOP reaches a process's threads one by one: a Go runtime thread can
 * still answer a PING sent right after kill(). True once every thread is
 * stopped (state T in /proc/<pid>/task/<tid>/stat).
 */
function allThreadsStopped(pid: number): boolean {
  return readdirSync(`/proc/${pid}/task`).every((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
  });
}

const plugin = (socketPath: string) => ({
  socketPath,
  timestamp: 1,
  uuid: 'gen-1',
  foundInDeprecatedDir: false,
  name: 'p',
});

for (const kind of FARM_KINDS) {
  describe(`liveness holds the handshake connection (${kind} plugins)`, () => {
    it('one connection per registered plugin, kept open; one GetInfo and one Notify(true)', async (t) => {
      const s = await managerOver(t, kind, ['a', 'b', 'c']);
      if (s === undefined) return;
      for (const path of s.paths) {
        await waitFor(`${path} held open`, async () => (await s.stats(path)).openConnections === 1);
        const stats = await s.stats(path);
        assert.deepEqual([stats.connections, stats.getInfo, stats.notifyTrue], [1, 1, 1], path);
      }
    });

    it('probes go over it: twelve in a row keep the one connection (grpc-go closes one after three PINGs alone)', async (t) => {
      const s = await proberOnHandshake(t, kind, 1);
      if (s === undefined) return;
      s.prober.watch(plugin(s.socketPath));
      for (let i = 0; i < 12; i++) await s.prober.probeAll();
      assert.deepEqual(s.dead, []);
      const stats = await s.stats(s.socketPath);
      assert.deepEqual([stats.connections, stats.openConnections], [1, 1], 'still the handshake connection');
      assert.equal(stats.getInfo, 1, 'the probes are not GetInfo calls');
    });

    it('probes on it fail once the plugin is stopped (SIGSTOP)', async (t) => {
      const s = await proberOnHandshake(t, kind, 2);
      if (s === undefined) return;
      s.prober.watch(plugin(s.socketPath));
      await s.prober.probeAll();
      assert.deepEqual(s.dead, [], 'answered while the plugin runs');
      process.kill(s.farm.pid, 'SIGSTOP');
      await waitFor('every thread of the plugin stopped', () => allThreadsStopped(s.farm.pid));
      await s.prober.probeAll();
      await s.prober.probeAll();
      assert.deepEqual(s.dead, [s.socketPath]);
    });

    it('a handed-over connection nobody claims is closed at stop', async (t) => {
      const s = await proberOnHandshake(t, kind, 2);
      if (s === undefined) return;
      await s.prober.stop();
      await waitFor(
        'the plugin sees it closed',
        async () => (await s.stats(s.socketPath)).openConnections === 0,
      );
    });

    it('dropped by the plugin while its socket answers: connected again, still registered, no new handshake', async (t) => {
      const s = await managerOver(t, kind, ['p']);
      if (s === undefined) return;
      const path = s.paths[0] as string;
      await waitFor('held', async () => (await s.stats(path)).openConnections === 1);
      await s.farm.dropConnections([path]);
      // Liveness probes the socket (a connection a farm may count too), finds it answering, connects again.
      await waitFor('connected again', async () => {
        const stats = await s.stats(path);
        return stats.connections >= 2 && stats.openConnections === 1;
      });
      assert.equal(s.manager.actualState.getRegisteredPlugins().length, 1);
      assert.equal((await s.stats(path)).getInfo, 1, 'no new GetInfo');
      assert.equal(s.events.filter((e) => e.type === 'failed' || e.type === 'plugin-deregistered').length, 0);
    });

    it('with liveness off the handshake connection is closed, as the kubelet closes it', async (t) => {
      const s = await managerOver(t, kind, ['q'], false);
      if (s === undefined) return;
      const path = s.paths[0] as string;
      await waitFor('closed', async () => (await s.stats(path)).openConnections === 0);
      assert.equal((await s.stats(path)).connections, 1);
    });
  });
}
