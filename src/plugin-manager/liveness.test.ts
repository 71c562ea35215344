import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { PluginInfo } from '../cache/types.js';
import { type BerthError, silentLogger } from '../common/index.js';
import { createExamplePlugin, dialRegistration } from '../registration/index.js';
import { createTempDir, FakeClock } from '../testing/index.js';
import { createLivenessProber } from './liveness.js';

async function setup(t: TestContext, options: { busy?: boolean } = {}) {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const plugin = createExamplePlugin({
    socketPath: dir.join('p.sock'),
    name: 'p',
    type: 'DevicePlugin',
    versions: ['v1'],
  });
  t.after(() => plugin.stop());
  await plugin.start();
  const registered: PluginInfo[] = [
    { socketPath: plugin.socketPath, timestamp: 1, uuid: 'gen-1', foundInDeprecatedDir: false, name: 'p' },
  ];
  const dead: Array<{ plugin: PluginInfo; error: BerthError; failures: number }> = [];
  const clock = new FakeClock();
  const prober = createLivenessProber({
    periodMs: 1_000,
    timeoutMs: 200,
    failureThreshold: 3,
    clock,
    logger: silentLogger,
    dial: dialRegistration,
    registered: () => registered,
    isBusy: () => options.busy ?? false,
    onDead: (p, error, failures) => dead.push({ plugin: p, error, failures }),
  });
  t.after(() => prober.stop());
  return { plugin, registered, dead, prober, clock };
}

describe('liveness prober', () => {
  it('reports a plugin dead after the threshold of consecutive failures, not before', async (t) => {
    const { plugin, dead, prober } = await setup(t);
    await prober.probeAll();
    assert.equal(plugin.getInfoCalls, 1, 'a healthy probe is a GetInfo');
    plugin.behaviour.hangGetInfo = true;
    await prober.probeAll();
    await prober.probeAll();
    assert.equal(dead.length, 0);
    await prober.probeAll();
    assert.equal(dead.length, 1);
    assert.equal(dead[0]?.failures, 3);
    assert.equal(dead[0]?.error.code, 'BERTH_LIVENESS_FAILED');
    assert.match(dead[0]?.error.message ?? '', /failed 3 consecutive liveness probes/);
  });

  it('a success in between resets the count', async (t) => {
    const { plugin, dead, prober } = await setup(t);
    plugin.behaviour.hangGetInfo = true;
    await prober.probeAll();
    await prober.probeAll();
    plugin.behaviour.hangGetInfo = false;
    await prober.probeAll();
    plugin.behaviour.hangGetInfo = true;
    await prober.probeAll();
    await prober.probeAll();
    assert.equal(dead.length, 0);
  });

  it('a new generation of the socket starts counting afresh', async (t) => {
    const { plugin, registered, dead, prober } = await setup(t);
    plugin.behaviour.hangGetInfo = true;
    await prober.probeAll();
    await prober.probeAll();
    const current = registered[0];
    assert.ok(current);
    registered[0] = { ...current, uuid: 'gen-2' };
    await prober.probeAll();
    await prober.probeAll();
    assert.equal(dead.length, 0);
    await prober.probeAll();
    assert.equal(dead[0]?.plugin.uuid, 'gen-2');
  });

  it('leaves sockets with a running operation alone', async (t) => {
    const { plugin, prober } = await setup(t, { busy: true });
    await prober.probeAll();
    assert.equal(plugin.getInfoCalls, 0);
  });

  it('probes on its period once started, and not after stop()', async (t) => {
    const { plugin, prober, clock } = await setup(t);
    prober.start();
    await clock.advance(1_000);
    await prober.probeAll(); // joins the round the timer started
    assert.equal(plugin.getInfoCalls, 1);
    await prober.stop();
    await prober.stop();
    await clock.advance(5_000);
    assert.equal(plugin.getInfoCalls, 1);
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
          registered: () => [],
          isBusy: () => false,
          onDead: () => {},
        }),
      /liveness\.periodMs must be a positive number/,
    );
  });

  it('re-probes a dead socket on a doubling interval and reports it alive once it answers', async (t) => {
    const { plugin, prober, clock } = await setup(t);
    const deadPaths = [plugin.socketPath];
    const alive: string[] = [];
    const recovery = createLivenessProber({
      periodMs: 1_000,
      timeoutMs: 200,
      failureThreshold: 3,
      clock,
      logger: silentLogger,
      dial: dialRegistration,
      registered: () => [],
      isBusy: () => false,
      onDead: () => assert.fail('nothing registered, nothing to declare dead'),
      deadSockets: () => deadPaths,
      onAlive: (socketPath) => alive.push(socketPath),
    });
    t.after(() => recovery.stop());
    await prober.stop(); // only the recovery prober runs here
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

    plugin.behaviour.hangGetInfo = false;
    await clock.advance(16_000);
    await recovery.probeAll();
    assert.deepEqual(alive, [plugin.socketPath]);
  });
});
