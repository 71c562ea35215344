/**
 * Watch exhaustion (issue 17): when inotify refuses a directory's watch
 * (ENOSPC: max_user_watches reached; EMFILE: too many instances), the
 * directory's sockets are found by rescans every WATCH_FAILING_RESCAN_MS, not
 * after the regular interval. Lowering fs.inotify.max_user_watches needs root
 * and changes the whole machine, so the failure is injected through the
 * watcher's `watch` option (fs.watch for every other directory); the
 * directories, sockets and the other watches are real.
 */
import assert from 'node:assert/strict';
import { type FSWatcher, mkdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createDesiredStateOfWorld } from '../cache/index.js';
import { systemClock } from '../common/index.js';
import { createRecordingLogger, SocketPool } from '../testing/harness/index.js';
import { createTempDir, FakeClock, waitFor } from '../testing/index.js';
import { createPluginWatcher } from './index.js';
import { WATCH_FAILING_RESCAN_MS } from './plugin-watcher-options.js';

function exhausted(code: 'ENOSPC' | 'EMFILE', refuse: (dir: string) => boolean): typeof watch {
  return ((dir: string, ...rest: unknown[]) => {
    if (refuse(String(dir))) {
      const err = new Error(`${code}: System limit for number of file watchers reached, watch '${dir}'`);
      throw Object.assign(err, { code, syscall: 'watch', path: String(dir) });
    }
    return (watch as (...args: unknown[]) => FSWatcher)(dir, ...rest);
  }) as typeof watch;
}

describe('plugin watcher: watch exhaustion', () => {
  for (const code of ['ENOSPC', 'EMFILE'] as const) {
    it(`${code} on a subdirectory's watch: its sockets are found within about ${WATCH_FAILING_RESCAN_MS} ms, not at the 60 s rescan`, async (t) => {
      await using tmp = createTempDir('bw-exhaust-');
      const dir = tmp.join('registry');
      const dsw = createDesiredStateOfWorld();
      const logger = createRecordingLogger();
      const pool = new SocketPool();
      const watcher = createPluginWatcher({
        dir,
        desiredState: dsw,
        clock: systemClock,
        logger,
        rescanIntervalMs: 60_000,
        watch: exhausted(code, (d) => d.endsWith('/unwatched')),
      });
      t.after(async () => {
        await watcher.stop();
        await pool.closeAll();
      });
      await watcher.start();
      await watcher.ready;
      mkdirSync(join(dir, 'unwatched'));
      mkdirSync(join(dir, 'watched'));
      await waitFor('the failed watch to be reported', () =>
        logger.records.some((r) => r.level === 'warn' && r.message.includes(code)),
      );
      // Created after the directory was walked: only a rescan (or a watch) can see these.
      const began = performance.now();
      const blind = await pool.serve(join(dir, 'unwatched', 'a.sock'));
      const seen = await pool.serve(join(dir, 'watched', 'b.sock'));
      await waitFor(
        'both sockets to be found',
        () => dsw.pluginExists(blind.path) && dsw.pluginExists(seen.path),
        {
          timeoutMs: 20_000,
        },
      );
      const tookMs = performance.now() - began;
      assert.ok(
        tookMs < 30_000,
        `found after ${tookMs.toFixed(0)} ms: the 60 s rescan did it, not the fast one`,
      );
      const warning = logger.records.find((r) => r.level === 'warn' && r.message.includes(code));
      assert.match(
        warning?.message ?? '',
        new RegExp(`rescans every ${WATCH_FAILING_RESCAN_MS} ms find its sockets`),
      );
    });
  }

  it('the fast rescans stop once the watch is back', async (t) => {
    await using tmp = createTempDir('bw-exhaust-');
    const dir = tmp.join('registry');
    const clock = new FakeClock();
    let refuse = true;
    const logger = createRecordingLogger();
    const watcher = createPluginWatcher({
      dir,
      desiredState: createDesiredStateOfWorld(),
      clock,
      logger,
      rescanIntervalMs: 60_000,
      watch: exhausted('ENOSPC', (d) => refuse && d.endsWith('/sub')),
    });
    t.after(() => watcher.stop());
    mkdirSync(join(dir, 'sub'), { recursive: true });
    await watcher.start();
    await clock.waitForTimers(1);
    assert.equal(clock.nextTimerIn(), WATCH_FAILING_RESCAN_MS, 'a failing watch: the next rescan is soon');
    refuse = false;
    await clock.advance(WATCH_FAILING_RESCAN_MS);
    await clock.waitForTimers(1);
    assert.equal(clock.nextTimerIn(), 60_000, 'the watch is back: the regular interval again');
    assert.ok(
      logger.records.some((r) => r.level === 'info' && r.message === 'watching plugin directory again'),
    );
  });
});
