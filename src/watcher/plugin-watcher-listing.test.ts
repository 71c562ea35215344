import assert from 'node:assert/strict';
import { mkdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { createDesiredStateOfWorld } from '../cache/index.js';
import { createTempDir, FakeClock, SocketPool } from '../testing/index.js';
import { createPluginWatcher } from './index.js';
import { inspectPath } from './inspect-path.js';
import { THOROUGH_RESCAN_EVERY } from './plugin-watcher-options.js';

/**
 * Periodic rescans without fs.watch (so only a read of the directory can find
 * anything), with every inspection recorded: a read of a directory stats each
 * socket in it, a skipped directory costs one stat of the directory itself.
 */
function setup(t: TestContext) {
  const tmp = createTempDir('bw-listing-');
  const dir = tmp.join('registry');
  const sub = join(dir, 'x', 'y');
  mkdirSync(sub, { recursive: true });
  const dsw = createDesiredStateOfWorld();
  const clock = new FakeClock();
  const pool = new SocketPool();
  const inspected: string[] = [];
  const inspect: typeof inspectPath = (path, options) => {
    inspected.push(path);
    return inspectPath(path, options);
  };
  const watcher = createPluginWatcher({
    dir,
    desiredState: dsw,
    clock,
    rescanIntervalMs: 10_000,
    useFsWatch: false,
    inspect,
  });
  t.after(async () => {
    await watcher.stop();
    await pool.closeAll();
    tmp.remove();
  });
  /** Fires the rescan timer; returns what that scan inspected. */
  const tick = async () => {
    await clock.waitForTimers(1);
    const from = inspected.length;
    await clock.advance(10_000);
    await clock.waitForTimers(1);
    return inspected.slice(from);
  };
  /** Dates every directory of the tree a minute back: settled, as a quiet directory's mtime is. */
  const settle = () => {
    const past = new Date(Date.now() - 60_000);
    for (const d of [dir, join(dir, 'x'), sub]) utimesSync(d, past, past);
  };
  return { dir, sub, dsw, pool, watcher, tick, settle };
}

describe('plugin watcher: periodic rescans skip unchanged directories', () => {
  it('does not read a directory whose mtime shows no change, and reads it again once an entry changes', async (t) => {
    const { dir, sub, dsw, pool, watcher, tick, settle } = setup(t);
    await watcher.start();
    const a = await pool.serve(join(dir, 'a.sock'));
    const b = await pool.serve(join(sub, 'b.sock'));
    settle();

    const first = await tick();
    assert.ok(
      dsw.pluginExists(a.path) && dsw.pluginExists(b.path),
      'the first periodic scan reads and finds both',
    );
    assert.ok(first.includes(a.path) && first.includes(b.path));

    const quiet = await tick();
    assert.deepEqual(
      quiet.filter((p) => p.endsWith('.sock')),
      [],
      'a quiet tree is not read: no socket statted',
    );
    assert.ok(quiet.includes(sub), 'a skipped directory still has its subdirectories checked');
    assert.ok(dsw.pluginExists(a.path) && dsw.pluginExists(b.path), 'skipping forgets nothing');

    // A new socket in the subdirectory moves that directory's mtime only.
    const c = await pool.serve(join(sub, 'c.sock'));
    const changed = await tick();
    assert.ok(dsw.pluginExists(c.path), 'the changed directory is read');
    assert.ok(!changed.includes(a.path), 'its unchanged parent is still skipped');

    // Removal and re-creation in place are changes too.
    const generation = dsw.get(a.path)?.uuid;
    await a.close();
    await pool.serve(a.path);
    await tick();
    assert.notEqual(dsw.get(a.path)?.uuid, generation, 'a socket re-created in place gets a new generation');
    await b.close();
    await tick();
    assert.ok(!dsw.pluginExists(b.path), 'a removed socket is forgotten');
  });

  it('keeps no listing of a directory that changed within the last second (directory timestamps are coarse)', async (t) => {
    const { dir, pool, watcher, tick } = setup(t);
    await watcher.start();
    const a = await pool.serve(join(dir, 'a.sock'));
    const now = new Date();
    utimesSync(dir, now, now);
    await tick();
    assert.ok((await tick()).includes(a.path), 'a fresh mtime is not trusted: the directory is read again');
  });

  it('reads everything on every THOROUGH_RESCAN_EVERY-th periodic rescan, for file systems whose mtimes lie', async (t) => {
    const { dir, dsw, pool, watcher, tick, settle } = setup(t);
    await watcher.start();
    const a = await pool.serve(join(dir, 'a.sock'));
    settle();
    let scans = 1;
    await tick();
    const generation = dsw.get(a.path)?.uuid;
    assert.ok(generation);

    // Re-created in place, then the directory's mtime put back: nothing in the mtime shows the change.
    const { atime, mtime } = statSync(dir);
    await a.close();
    await pool.serve(a.path);
    utimesSync(dir, atime, mtime);
    while (scans < THOROUGH_RESCAN_EVERY - 1) {
      await tick();
      scans += 1;
    }
    assert.equal(dsw.get(a.path)?.uuid, generation, 'the skipping scans did not notice');
    const thorough = await tick();
    assert.ok(thorough.includes(a.path));
    assert.notEqual(dsw.get(a.path)?.uuid, generation, 'the thorough scan found the new generation');
  });
});
