/**
 * Sockets that refuse before they listen, against both plugin farms (the
 * Node farm, and the Go farm: grpc-go, one grpc.Server per socket, as the
 * plugins berth meets in the field). While a socket refuses, berth's retries
 * are raw connects (registration/raw-unix-connect.ts): a bare connect() and
 * close, no HTTP/2. These cases check that a grpc-go server takes those
 * probes in its stride and that each plugin still sees exactly one GetInfo and
 * one Notify(true), with one connection held for liveness.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { waitFor } from '../src/testing/index.js';
import { FARM_KINDS, type FarmKind, openFarm, startFarmManager } from './fixtures/plugin-farms.js';

/** A plugin manager over an empty plugins directory of a farm; plugins appear after it started. */
async function watching(t: TestContext, kind: FarmKind) {
  const opened = await openFarm(t, kind);
  if (opened === undefined) return undefined;
  const { events } = await startFarmManager(t, opened.dir.join('plugins'));
  const registered = (path: string) =>
    waitFor(`${path} registered`, () =>
      events.some((e) => e.type === 'plugin-registered' && e.socketPath === path),
    );
  return { ...opened, events, registered };
}

for (const kind of FARM_KINDS) {
  describe(`sockets that refuse before they listen (${kind} plugins)`, () => {
    it('a bind -> listen gap of 150 ms: probed while it refuses, then one GetInfo and one Notify(true)', async (t) => {
      const s = await watching(t, kind);
      if (s === undefined) return;
      const [path] = (await s.serve(['young'], 150)) as [string];
      await s.registered(path);
      await waitFor('its connection held', async () => (await s.stats(path)).openConnections === 1);
      const stats = await s.stats(path);
      assert.deepEqual([stats.getInfo, stats.notifyTrue, stats.notifyFalse], [1, 1, 0]);
      // Refused connects are never accepted; the probe that found it listening was, and closed at once.
      assert.ok(stats.connections <= 2, `connections accepted: ${stats.connections}`);
      assert.equal(
        s.events.filter((e) => e.type === 'failed').length,
        0,
        'the gap is bridged by the young-socket retries, with no failed attempt',
      );
    });

    it('refusing past the young age (1.6 s): the attempt fails, the retry probes before it dials, one GetInfo and one Notify(true)', async (t) => {
      const s = await watching(t, kind);
      if (s === undefined) return;
      const [path] = (await s.serve(['late'], 1_600)) as [string];
      await s.registered(path);
      const failed = s.events.filter((e) => e.type === 'failed' && e.socketPath === path);
      assert.ok(failed.length >= 1, 'an attempt failed while the file was old and still refused');
      await waitFor('its connection held', async () => (await s.stats(path)).openConnections === 1);
      const stats = await s.stats(path);
      assert.deepEqual([stats.getInfo, stats.notifyTrue, stats.notifyFalse], [1, 1, 0]);
      assert.ok(stats.connections <= 2, `connections accepted: ${stats.connections}`);
    });
  });
}
