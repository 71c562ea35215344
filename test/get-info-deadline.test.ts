/**
 * berth's GetInfo deadline (5 s, DEFAULT_EXECUTOR_TIMEOUTS) against plugins
 * on other gRPC stacks: the Go farm (grpc-go, one grpc.Server per socket), the
 * Node farm (node:http2) and a Python grpcio plugin (C-core, which enforces
 * the call's grpc-timeout on its side too). The kubelet gives GetInfo 1 s and
 * asks again on a fresh connection when it runs out (kubernetes#127457); a
 * plugin slower than that (starved of CPU in a storm) is registered by berth
 * with its one answer. Each case has its control: the same plugin under the
 * kubelet's 1 s fails.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_EXECUTOR_TIMEOUTS } from '../src/executor/index.js';
import { dialRegistration } from '../src/registration/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';
import { FARM_KINDS, openFarm, startFarmManager } from './fixtures/plugin-farms.js';
import { requirePythonGrpc, spawnPythonPlugin } from './fixtures/python-plugin.js';

/** The kubelet's GetInfo deadline. */
const KUBELET_GET_INFO_MS = 1_000;
/** Slower than the kubelet's deadline, well within berth's. */
const SLOW_MS = 1_500;

it('the default GetInfo deadline is longer than the kubelet’s and than SLOW_MS', () => {
  assert.equal(DEFAULT_EXECUTOR_TIMEOUTS.getInfoMs, 5_000);
  assert.ok(DEFAULT_EXECUTOR_TIMEOUTS.getInfoMs > SLOW_MS && SLOW_MS > KUBELET_GET_INFO_MS);
});

for (const kind of FARM_KINDS) {
  describe(`a plugin slower to answer GetInfo than the kubelet's 1 s (${kind} plugins)`, () => {
    it('is registered with one GetInfo and its connection held; under the kubelet’s 1 s it is not', async (t) => {
      const farm = await openFarm(t, kind);
      if (farm === undefined) return;
      const berth = await startFarmManager(t, farm.dir.join('plugins'));
      const [path] = (await farm.serve(['slow'], 0, SLOW_MS)) as [string];
      await waitFor('the slow plugin registered', () =>
        berth.events.some((e) => e.type === 'plugin-registered' && e.socketPath === path),
      );
      await waitFor('its connection held', async () => (await farm.stats(path)).openConnections === 1);
      const stats = await farm.stats(path);
      assert.deepEqual(
        [stats.getInfo, stats.notifyTrue, stats.notifyFalse],
        [1, 1, 0],
        'one GetInfo, one Notify(true)',
      );
      // One handshake connection, held. A second accepted one can only be a connect probe that
      // found the socket listening after it refused in its bind -> listen gap (closed at once).
      assert.ok(stats.connections <= 2, `connections accepted: ${stats.connections}`);
      assert.equal(berth.events.filter((e) => e.type === 'failed').length, 0);
      await berth.manager.stop();

      // The control: the same plugin, the kubelet's deadline.
      await farm.farm.reset();
      const kubelet = await startFarmManager(t, farm.dir.join('plugins'), {
        timeouts: { getInfoMs: KUBELET_GET_INFO_MS },
      });
      const failed = await waitFor('an attempt failed at the deadline', () =>
        kubelet.events.find((e) => e.type === 'failed' && e.socketPath === path),
      );
      assert.ok(failed.type === 'failed');
      assert.equal(failed.error.code, 'BERTH_GET_INFO_FAILED');
      assert.match(failed.error.message, /DEADLINE_EXCEEDED/);
      assert.equal((await farm.stats(path)).notifyTrue, 0, 'not registered');
    });
  });
}

describe("a plugin slower to answer GetInfo than the kubelet's 1 s (a Python grpcio plugin)", () => {
  it('C-core serves the call to its end (grpc-timeout is berth’s deadline): one GetInfo; under 1 s it fails', async (t) => {
    if (!requirePythonGrpc(t)) return;
    const dir = createTempDir();
    t.after(() => dir.remove());
    const spawn = async (name: string) => {
      const socketPath = dir.join(`${name}.sock`);
      const plugin = spawnPythonPlugin({
        socketPath,
        name,
        type: 'DevicePlugin',
        versions: ['v1beta1'],
        getInfoDelayMs: SLOW_MS,
      });
      t.after(() => {
        if (plugin.child.exitCode === null && plugin.child.signalCode === null) plugin.child.kill('SIGKILL');
      });
      assert.deepEqual(await plugin.next(`${name} serving`), { event: 'serving' });
      const conn = await dialRegistration(socketPath, { timeoutMs: 10_000 });
      t.after(() => conn.close());
      return { plugin, conn };
    };

    const slow = await spawn('slow');
    const info = await slow.conn.getInfo({ timeoutMs: DEFAULT_EXECUTOR_TIMEOUTS.getInfoMs });
    assert.equal(info.name, 'slow');
    assert.deepEqual(await slow.plugin.next('the GetInfo call'), { event: 'getinfo' });
    // One call: a second would have been reported before this Notify.
    await slow.conn.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, { timeoutMs: 5_000 });
    assert.deepEqual(await slow.plugin.next('notified(true)'), {
      event: 'notified',
      registered: true,
      error: '',
    });

    const kubelet = await spawn('kubelet');
    const error = await kubelet.conn.getInfo({ timeoutMs: KUBELET_GET_INFO_MS }).then(
      () => assert.fail('GetInfo should fail under the kubelet’s deadline'),
      (err: unknown) => err as Error,
    );
    assert.match(error.message, /DEADLINE_EXCEEDED/);
  });
});
