import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { PluginInfo } from '../cache/types.js';
import { type BerthError, silentLogger } from '../common/index.js';
import { createExamplePlugin, dialRegistration } from '../registration/index.js';
import { createRecordingLogger, type PluginFarm, startPluginFarm } from '../testing/harness/index.js';
import { createTempDir, FakeClock, type TempDir, waitFor } from '../testing/index.js';
import { createLivenessProber, type LivenessProberOptions } from './liveness.js';
import { PINGS_PER_SLICE } from './ping-slices.js';

interface Dead {
  plugin: PluginInfo;
  error: BerthError;
  failures: number;
}

/** Plugins in a separate process, so the test can freeze (SIGSTOP) or kill them. */
async function setup(t: TestContext, options: Partial<LivenessProberOptions> = {}) {
  const dir: TempDir = createTempDir();
  const farm: PluginFarm = await startPluginFarm();
  t.after(async () => {
    try {
      process.kill(farm.pid, 'SIGCONT');
    } catch {
      // already gone (killed by the test)
    }
    await farm.stop();
    dir.remove();
  });
  const dead: Dead[] = [];
  const clock = new FakeClock();
  const prober = createLivenessProber({
    periodMs: 1_000,
    timeoutMs: 200,
    failureThreshold: 3,
    clock,
    logger: silentLogger,
    dial: dialRegistration,
    isBusy: () => false,
    onDead: (p, error, failures) => dead.push({ plugin: p, error, failures }),
    ...options,
  });
  t.after(() => prober.stop());
  await prober.start();
  const serve = async (name: string, uuid = 'gen-1'): Promise<PluginInfo> => {
    const socketPath = join(dir.path, `${name}.sock`);
    await farm.serve([socketPath]);
    return { socketPath, timestamp: 1, uuid, foundInDeprecatedDir: false, name };
  };
  return { farm, dead, prober, clock, serve, dir };
}

/** berth's example plugin in this process, in its own temp dir (its behaviour can hang GetInfo). */
async function startInProcessPlugin(t: TestContext) {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const plugin = createExamplePlugin({
    socketPath: dir.join('p.sock'),
    name: 'p',
    type: 'T',
    versions: ['v1'],
  });
  t.after(() => plugin.stop());
  await plugin.start();
  return plugin;
}

describe('liveness: one held connection per plugin', () => {
  it('a plugin that crashes with its socket file left behind is dead at once, with no probe period', async (t) => {
    const { farm, dead, prober, serve } = await setup(t);
    const plugin = await serve('p');
    prober.watch(plugin);
    await prober.probeAll();
    assert.equal(dead.length, 0, 'a healthy plugin answers its ping');
    process.kill(farm.pid, 'SIGKILL'); // no chance to unlink the socket
    await waitFor('the dead plugin reported', () => dead.length === 1);
    assert.equal(dead[0]?.plugin.uuid, 'gen-1');
    assert.equal(dead[0]?.error.code, 'BERTH_LIVENESS_FAILED');
    assert.match(dead[0]?.error.message ?? '', /connection closed and the socket refuses new ones/);
    assert.deepEqual(prober.watched(), []);
  });

  it('a plugin whose socket file went is left to the watcher, and one that answers again is reconnected', async (t) => {
    const dead: Dead[] = [];
    const prober = createLivenessProber({
      periodMs: 1_000,
      timeoutMs: 200,
      failureThreshold: 1,
      clock: new FakeClock(),
      logger: silentLogger,
      dial: dialRegistration,
      isBusy: () => false,
      onDead: (p, error, failures) => dead.push({ plugin: p, error, failures }),
    });
    t.after(() => prober.stop());
    await prober.start();
    const plugin = await startInProcessPlugin(t);
    prober.watch({ socketPath: plugin.socketPath, timestamp: 1, uuid: 'g', foundInDeprecatedDir: false });
    await prober.probeAll();
    await plugin.stop(); // removes the socket file
    // A new server on the same path: the held connection is re-established to it.
    const again = createExamplePlugin({
      socketPath: plugin.socketPath,
      name: 'p',
      type: 'T',
      versions: ['v1'],
    });
    t.after(() => again.stop());
    await again.start();
    await prober.probeAll();
    assert.deepEqual(dead, []);
  });

  it('a stopped (SIGSTOP) plugin is dead after the threshold of failed keepalive pings, not before', async (t) => {
    const { farm, dead, prober, serve } = await setup(t);
    const plugin = await serve('p');
    prober.watch(plugin);
    await prober.probeAll();
    process.kill(farm.pid, 'SIGSTOP');
    await prober.probeAll();
    await prober.probeAll();
    assert.equal(dead.length, 0);
    await prober.probeAll();
    assert.equal(dead.length, 1);
    assert.equal(dead[0]?.failures, 3);
    assert.match(dead[0]?.error.message ?? '', /failed 3 consecutive liveness probes/);
  });

  it('a success in between resets the count', async (t) => {
    const { farm, dead, prober, serve } = await setup(t);
    prober.watch(await serve('p'));
    process.kill(farm.pid, 'SIGSTOP');
    await prober.probeAll();
    await prober.probeAll();
    process.kill(farm.pid, 'SIGCONT');
    await prober.probeAll();
    process.kill(farm.pid, 'SIGSTOP');
    await prober.probeAll();
    await prober.probeAll();
    assert.equal(dead.length, 0);
  });

  it('a new generation of the socket starts counting afresh', async (t) => {
    const { farm, dead, prober, serve } = await setup(t);
    const plugin = await serve('p');
    prober.watch(plugin);
    await prober.probeAll();
    process.kill(farm.pid, 'SIGSTOP');
    await prober.probeAll();
    await prober.probeAll();
    prober.watch({ ...plugin, uuid: 'gen-2' });
    await prober.probeAll();
    await prober.probeAll();
    assert.equal(dead.length, 0);
    await prober.probeAll();
    assert.equal(dead[0]?.plugin.uuid, 'gen-2');
  });

  it('leaves sockets with a running operation alone', async (t) => {
    const { farm, dead, prober, serve } = await setup(t, { isBusy: () => true });
    prober.watch(await serve('p'));
    process.kill(farm.pid, 'SIGSTOP');
    for (let i = 0; i < 4; i++) await prober.probeAll();
    assert.equal(dead.length, 0);
  });

  it('pings on its period once started, at most pingsPerPeriod per period, and not after stop()', async (t) => {
    const { farm, dead, prober, clock, serve } = await setup(t, { failureThreshold: 1, pingsPerPeriod: 1 });
    prober.watch(await serve('a'));
    prober.watch(await serve('b'));
    process.kill(farm.pid, 'SIGSTOP');
    await clock.advance(1_000);
    await waitFor('one ping failed', () => dead.length === 1);
    assert.equal(prober.watched().length, 1, 'only one plugin was pinged in the first period');
    await clock.advance(1_000);
    await waitFor('the other pinged in the next period', () => dead.length === 2);
    await prober.stop();
    await prober.stop();
    assert.equal(prober.state, 'stopped');
  });

  it("judges a period's pings together: an answer, even a late one, resets the count", async (t) => {
    const logger = createRecordingLogger();
    const { farm, dead, prober, clock, serve } = await setup(t, { failureThreshold: 2, logger });
    prober.watch(await serve('a'));
    const judged: { sent: number; answered: number }[] = [];
    let read = 0;
    /** Fires one period and waits for its pings to be judged (timeoutMs later, in real time). */
    const period = async () => {
      const before = judged.length;
      await clock.advance(1_000);
      await waitFor("the period's pings judged", () => {
        for (; read < logger.records.length; read++) {
          const r = logger.records[read];
          if (r?.message === 'liveness pings judged')
            judged.push(r.fields as { sent: number; answered: number });
        }
        return judged.length > before;
      });
      return judged.at(-1);
    };
    assert.deepEqual(await period(), { sent: 1, answered: 1 });
    process.kill(farm.pid, 'SIGSTOP');
    assert.deepEqual(await period(), { sent: 1, answered: 0 });
    assert.equal(dead.length, 0, 'one failure of two');
    process.kill(farm.pid, 'SIGCONT');
    assert.deepEqual(await period(), { sent: 1, answered: 1 }, 'the stalled ping is answered late');
    process.kill(farm.pid, 'SIGSTOP');
    await period();
    assert.equal(dead.length, 0, 'the late answer reset the count');
    await period();
    assert.equal(dead.length, 1, 'two failures in a row');
    process.kill(farm.pid, 'SIGCONT');
  });

  it("spreads a period's pings over the period, in slices of at most PINGS_PER_SLICE", async (t) => {
    const logger = createRecordingLogger();
    const { prober, clock, farm, dir } = await setup(t, { logger, periodMs: 3_000 });
    // 250 plugins in a period of 3 s: three slices (83, 83, 84), a second apart.
    const names = Array.from({ length: 250 }, (_, i) => `p${i}`);
    await farm.serve(names.map((name) => join(dir.path, `${name}.sock`)));
    for (const name of names)
      prober.watch({
        socketPath: join(dir.path, `${name}.sock`),
        timestamp: 1,
        uuid: 'gen-1',
        foundInDeprecatedDir: false,
        name,
      });
    const slices = () =>
      logger.records
        .filter((r) => r.message === 'liveness pings judged')
        .map((r) => (r.fields as { sent: number }).sent);
    await clock.advance(3_000);
    await waitFor('the first slice judged', () => slices().length === 1);
    assert.deepEqual(slices(), [83], 'only the first slice goes out when the period starts');
    await clock.advance(1_000);
    await waitFor('the second slice judged', () => slices().length === 2);
    await clock.advance(1_000);
    await waitFor('the third slice judged', () => slices().length === 3);
    assert.deepEqual(slices(), [83, 83, 84], 'every plugin pinged once in the period, none twice');
    assert.ok(Math.max(...slices()) <= PINGS_PER_SLICE);
    await clock.advance(1_000); // 6 s: the next period starts over with its first slice
    await waitFor("the next period's first slice judged", () => slices().length === 4);
    assert.equal(slices()[3], 83);
  });

  it('while registrations run, a new connection waits for connectWaiting()', async (t) => {
    const { farm, dead, prober, serve } = await setup(t, { deferConnects: () => true });
    for (const name of ['a', 'b']) prober.watch(await serve(name));
    // The plugins crash, their files linger: only a held connection can notice.
    process.kill(farm.pid, 'SIGKILL');
    await prober.probeAll();
    assert.equal(dead.length, 0, 'no connection was opened yet, so nothing was lost');
    prober.connectWaiting();
    await waitFor('both found dead once their connections were opened', () => dead.length === 2);
    assert.deepEqual(dead.map((d) => d.plugin.name).sort(), ['a', 'b']);
  });

  it('a connection held back by a long storm is opened at the next period', async (t) => {
    const { farm, dead, prober, clock, serve } = await setup(t, { deferConnects: () => true });
    prober.watch(await serve('p'));
    process.kill(farm.pid, 'SIGKILL');
    await prober.probeAll();
    assert.equal(dead.length, 0);
    await clock.advance(1_000);
    await waitFor('found dead after the period opened its connection', () => dead.length === 1);
  });

  it('rejects bad options', () => {
    assert.throws(
      () =>
        createLivenessProber({
          periodMs: 0,
          timeoutMs: 1,
          failureThreshold: 1,
          clock: new FakeClock(),
          logger: silentLogger,
          dial: dialRegistration,
          isBusy: () => false,
          onDead: () => {},
        }),
      /liveness\.periodMs must be a positive number/,
    );
  });

  it('re-probes a dead socket on a doubling interval and reports it alive once it answers', async (t) => {
    const plugin = await startInProcessPlugin(t);
    const clock = new FakeClock();
    const deadPaths = [plugin.socketPath];
    const alive: string[] = [];
    const stillDead: BerthError[] = [];
    const recovery = createLivenessProber({
      periodMs: 1_000,
      timeoutMs: 200,
      failureThreshold: 3,
      clock,
      logger: silentLogger,
      dial: dialRegistration,
      isBusy: () => false,
      onDead: () => assert.fail('nothing registered, nothing to declare dead'),
      deadSockets: () => deadPaths,
      onAlive: (socketPath) => alive.push(socketPath),
      onStillDead: (socketPath, error) => {
        assert.equal(socketPath, plugin.socketPath);
        stillDead.push(error);
      },
    });
    t.after(() => recovery.stop());
    plugin.behaviour.hangGetInfo = true;

    // Rounds every period; count the rounds in which the dead socket was actually probed.
    const probedAt: number[] = [];
    for (let round = 0; round <= 16; round++) {
      const before = plugin.getInfoCalls;
      await recovery.probeAll();
      if (plugin.getInfoCalls > before) probedAt.push(round);
      await clock.advance(1_000);
    }
    // Seen at round 0, first probe one period later, then 2, 4 and 8 periods apart.
    assert.deepEqual(probedAt, [1, 3, 7, 15]);
    assert.deepEqual(alive, []);
    // Each failed probe says why, so the dead socket's status can follow (a hang now; a refusal later).
    assert.deepEqual(
      stillDead.map((e) => e.code),
      ['BERTH_GET_INFO_FAILED', 'BERTH_GET_INFO_FAILED', 'BERTH_GET_INFO_FAILED', 'BERTH_GET_INFO_FAILED'],
    );

    plugin.behaviour.hangGetInfo = false;
    await clock.advance(16_000);
    await recovery.probeAll();
    assert.deepEqual(alive, [plugin.socketPath]);
  });

  it('probes a dead socket once at a time: a probe slower than a period is not doubled', async (t) => {
    const plugin = await startInProcessPlugin(t);
    plugin.behaviour.hangGetInfo = true;
    const clock = new FakeClock();
    const stillDead: BerthError[] = [];
    const recovery = createLivenessProber({
      periodMs: 1_000,
      timeoutMs: 60_000, // far longer than a period: the probe is still out while periods pass
      failureThreshold: 3,
      clock,
      logger: silentLogger,
      dial: dialRegistration,
      isBusy: () => false,
      onDead: () => assert.fail('nothing registered'),
      deadSockets: () => [plugin.socketPath],
      onStillDead: (_, error) => stillDead.push(error),
    });
    await recovery.start();
    await clock.advance(1_000); // first seen: the first probe is one period away
    await clock.advance(1_000); // the first probe goes out and hangs
    await waitFor('the first probe reached the plugin', () => plugin.getInfoCalls === 1);
    for (let i = 0; i < 40; i++) await clock.advance(1_000);
    assert.equal(plugin.getInfoCalls, 1, 'no second probe while the first is out');
    assert.deepEqual(stillDead, []);
    await recovery.stop(); // aborts the probe out: not a failure of the plugin
    assert.deepEqual(stillDead, []);
  });
});
