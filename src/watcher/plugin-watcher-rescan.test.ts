import assert from 'node:assert/strict';
import { existsSync, mkdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { createDesiredStateOfWorld } from '../cache/index.js';
import { createRecordingLogger, SocketPool } from '../testing/harness/index.js';
import { createTempDir, FakeClock, waitFor } from '../testing/index.js';
import { createPluginWatcher } from './index.js';
import { inspectPath } from './inspect-path.js';
import type { PluginWatcherOptions } from './plugin-watcher-options.js';
import { FULL_RESCAN_EVERY, THOROUGH_RESCAN_EVERY } from './plugin-watcher-options.js';

/** The rescan timer runs on a FakeClock: time moves only when a test advances it. */
function setup(t: TestContext, overrides: Partial<PluginWatcherOptions> = {}, deprecatedName?: string) {
  const tmp = createTempDir('bw-');
  const dir = tmp.join('registry');
  const deprecated = deprecatedName === undefined ? {} : { deprecatedDir: tmp.join(deprecatedName) };
  const dsw = createDesiredStateOfWorld();
  const clock = new FakeClock();
  const logger = createRecordingLogger();
  const pool = new SocketPool();
  /** Every path inspected, in order (a read of a directory stats each socket in it). */
  const inspected: string[] = [];
  const inspectWith = overrides.inspect ?? inspectPath;
  const watcher = createPluginWatcher({
    dir,
    desiredState: dsw,
    clock,
    logger,
    rescanIntervalMs: 10_000,
    ...deprecated,
    ...overrides,
    inspect: (path, options) => {
      inspected.push(path);
      return inspectWith(path, options);
    },
  });
  t.after(async () => {
    await watcher.stop();
    await pool.closeAll();
    tmp.remove();
  });
  /**
   * Fires the rescan timer and resolves once that scan is over (the timer is
   * re-armed after each scan), with the paths that scan inspected.
   */
  const tick = async () => {
    await clock.waitForTimers(1);
    const from = inspected.length;
    await clock.advance(10_000);
    await clock.waitForTimers(1);
    return inspected.slice(from);
  };
  return { tmp, dir, dsw, clock, logger, pool, watcher, tick };
}

describe('plugin watcher: periodic rescan', () => {
  it('alone discovers and removes sockets (no fs.watch)', async (t) => {
    const { dir, dsw, pool, watcher, tick } = setup(t, { useFsWatch: false });
    await watcher.start();
    const a = await pool.serve(join(dir, 'a.sock'));
    mkdirSync(join(dir, 'x', 'y'), { recursive: true });
    const b = await pool.serve(join(dir, 'x', 'y', 'b.sock'));
    await watcher.ready;
    assert.ok(!dsw.pluginExists(a.path), 'nothing but a rescan can find a socket here');

    await tick();
    assert.ok(dsw.pluginExists(a.path) && dsw.pluginExists(b.path));
    const generation = dsw.get(a.path)?.uuid;

    await tick();
    assert.equal(dsw.get(a.path)?.uuid, generation, 'an unchanged socket keeps its generation');

    await a.close();
    rmSync(join(dir, 'x'), { recursive: true, force: true });
    await tick();
    assert.deepEqual(dsw.getPluginsToRegister(), []);
    assert.deepEqual(watcher.knownSockets(), []);
  });

  it('with fs.watch, stats known sockets only on every FULL_RESCAN_EVERY-th periodic rescan, and still finds what changed', async (t) => {
    const inspected: string[] = [];
    const inspect: typeof inspectPath = (path, options) => {
      inspected.push(path);
      return inspectPath(path, options);
    };
    const { dir, dsw, pool, watcher, tick } = setup(t, { inspect });
    await watcher.start();
    const paths = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => (await pool.serve(join(dir, `s${i}.sock`))).path),
    );
    await waitFor('the watch to find all ten', () => paths.every((p) => dsw.pluginExists(p)));
    const statsOfKnown = () => inspected.filter((p) => paths.includes(p)).length;

    // A socket's bind and chmod can reach the watch as two events, the second
    // after the socket is known; the first light rescan runs after every
    // inspection those events queued (one queue, first in first out).
    await tick();
    const before = statsOfKnown();
    for (let i = 2; i < FULL_RESCAN_EVERY; i += 1) await tick();
    assert.equal(statsOfKnown(), before, 'light rescans stat no known socket');
    // A fresh mtime: the directory is read, not skipped as unchanged (that is plugin-watcher-listing.test.ts).
    // A file created and removed moves it without an event on the directory itself (utimes on it is
    // one, which the watch answers by reading the directory: stats of its own, which are not the
    // rescan's).
    writeFileSync(join(dir, 'touch.tmp'), '');
    rmSync(join(dir, 'touch.tmp'));
    await tick();
    assert.equal(statsOfKnown(), before + paths.length, 'the full rescan stats each known socket once');

    // A known socket removed and a new one added are seen (by the watch, or at the latest by a light rescan).
    rmSync(paths[0] as string);
    const late = await pool.serve(join(dir, 'late.sock'));
    await tick();
    await waitFor(
      'the removal and the addition',
      () => !dsw.pluginExists(paths[0] as string) && dsw.pluginExists(late.path),
    );
  });

  it('gives a socket re-created between two rescans a new generation', async (t) => {
    const { dir, dsw, pool, watcher, tick } = setup(t, { useFsWatch: false });
    await watcher.start();
    const path = join(dir, 'again.sock');
    let plugin = await pool.serve(path);
    await tick();
    const first = dsw.get(path);
    assert.ok(first);
    await plugin.close();
    plugin = await pool.serve(path);
    await tick();
    assert.notEqual(dsw.get(path)?.uuid, first.uuid);
  });

  it('removes an entry whose file is no longer a socket, and leaves others’ entries alone', async (t) => {
    const { dir, dsw, pool, watcher, tick } = setup(t, { useFsWatch: false });
    const path = join(dir, 'replaced.sock');
    mkdirSync(dir, { recursive: true });
    await pool.serve(path);
    await watcher.start();
    assert.ok(dsw.pluginExists(path));
    writeFileSync(join(dir, 'plain'), 'x');
    renameSync(join(dir, 'plain'), path);
    // An entry this watcher did not add is not the watcher's to remove.
    dsw.addOrUpdatePlugin('/elsewhere/manual.sock');
    await tick();
    assert.ok(!dsw.pluginExists(path));
    assert.ok(dsw.pluginExists('/elsewhere/manual.sock'));
  });

  it('does not re-add a socket someone else removed until the file is re-created', async (t) => {
    const { dir, dsw, pool, watcher, tick } = setup(t, { useFsWatch: false });
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'dead.sock');
    let plugin = await pool.serve(path);
    await watcher.start();
    dsw.removePlugin(path); // e.g. a liveness probe gave up on it
    await tick();
    assert.ok(!dsw.pluginExists(path));
    await plugin.close();
    plugin = await pool.serve(path);
    await tick();
    assert.ok(dsw.pluginExists(path));
  });

  it('joins rescans requested while one is already queued', async (t) => {
    const { dir, pool, watcher } = setup(t, { useFsWatch: false });
    await watcher.start();
    await pool.serve(join(dir, 'one.sock'));
    const first = watcher.rescan();
    const second = watcher.rescan();
    assert.equal(first, second, 'a scan not yet begun is shared');
    await Promise.all([first, second]);
    assert.deepEqual(watcher.knownSockets(), [join(dir, 'one.sock')]);
  });

  it('survives its directory being deleted and re-creates and re-watches it on the next rescan', async (t) => {
    const { dir, dsw, pool, watcher, logger, tick } = setup(t);
    await watcher.start();
    const a = await pool.serve(join(dir, 'a.sock'));
    await waitFor('a.sock in the desired state', () => dsw.pluginExists(a.path));

    // An empty directory's deletion is reported by its own watch.
    await a.close();
    rmSync(dir, { recursive: true, force: true });
    await waitFor('the vanished directory to be noticed', () =>
      logger.records.some((r) => r.level === 'warn' && /plugin directory vanished/.test(r.message)),
    );
    assert.ok(!dsw.pluginExists(a.path));
    await tick();
    assert.ok(existsSync(dir), 'the rescan re-created the directory');
    // The clock stands still from here on: only a re-established watch can see these sockets.
    const b = await pool.serve(join(dir, 'b.sock'));
    await waitFor('b.sock seen by the new watch', () => dsw.pluginExists(b.path));

    // With a plugin still listening, Linux reports the socket's removal but not the directory's
    // (the open socket pins it): nothing tells the watcher its watch died, only the rescan notices.
    rmSync(dir, { recursive: true, force: true });
    await waitFor('b.sock gone with its directory', () => !dsw.pluginExists(b.path));
    await tick();
    assert.ok(existsSync(dir), 'the rescan re-created the directory again');
    mkdirSync(join(dir, 'nested'));
    const c = await pool.serve(join(dir, 'nested', 'c.sock'));
    await waitFor('c.sock in a new subdirectory', () => dsw.pluginExists(c.path));
    assert.ok(!logger.records.some((r) => r.level === 'error'));
  });

  it('flags sockets in the deprecated directory, at start and when created later', async (t) => {
    const { tmp, dir, dsw, pool, watcher } = setup(t, {}, 'plugins');
    const old = tmp.join('plugins');
    mkdirSync(old, { recursive: true });
    const early = await pool.serve(join(old, 'early.sock'));
    await watcher.start();
    assert.equal(dsw.get(early.path)?.foundInDeprecatedDir, true);

    const current = await pool.serve(join(dir, 'current.sock'));
    mkdirSync(join(old, 'sub'));
    const later = await pool.serve(join(old, 'sub', 'later.sock'));
    await waitFor('both new sockets', () => dsw.pluginExists(current.path) && dsw.pluginExists(later.path));
    assert.equal(dsw.get(current.path)?.foundInDeprecatedDir, false);
    assert.equal(dsw.get(later.path)?.foundInDeprecatedDir, true);

    await later.close();
    await waitFor('the deprecated socket removed', () => !dsw.pluginExists(later.path));
  });

  it('reports a deprecated directory nested in the main one once, as deprecated', async (t) => {
    const tmp = createTempDir('bw-');
    const dir = tmp.join('registry');
    const dsw = createDesiredStateOfWorld();
    const pool = new SocketPool();
    const watcher = createPluginWatcher({
      dir,
      deprecatedDir: join(dir, 'old'),
      desiredState: dsw,
      clock: new FakeClock(),
    });
    t.after(async () => {
      await watcher.stop();
      await pool.closeAll();
      tmp.remove();
    });
    await watcher.start();
    const adds: string[] = [];
    dsw.onChange((p) => adds.push(p));
    const path = join(dir, 'old', 'x.sock');
    await pool.serve(path);
    await waitFor('the nested deprecated socket', () => dsw.pluginExists(path));
    await watcher.rescan();
    assert.equal(dsw.get(path)?.foundInDeprecatedDir, true);
    assert.deepEqual(adds, [path], 'added once, by the deprecated root');
  });
});

/** The tree the listing tests use, dated a minute back by `settle()`: a quiet directory's mtime is settled. */
function quietTree(dir: string) {
  const sub = join(dir, 'x', 'y');
  mkdirSync(sub, { recursive: true });
  const settle = () => {
    const past = new Date(Date.now() - 60_000);
    for (const d of [dir, join(dir, 'x'), sub]) utimesSync(d, past, past);
  };
  return { sub, settle };
}

describe('plugin watcher: periodic rescans skip unchanged directories', () => {
  it('does not read a directory whose mtime shows no change, and reads it again once an entry changes', async (t) => {
    const { dir, dsw, pool, watcher, tick } = setup(t, { useFsWatch: false });
    const { sub, settle } = quietTree(dir);
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
    const { dir, pool, watcher, tick } = setup(t, { useFsWatch: false });
    quietTree(dir);
    await watcher.start();
    const a = await pool.serve(join(dir, 'a.sock'));
    const now = new Date();
    utimesSync(dir, now, now);
    await tick();
    assert.ok((await tick()).includes(a.path), 'a fresh mtime is not trusted: the directory is read again');
  });

  it('reads everything on every THOROUGH_RESCAN_EVERY-th periodic rescan, for file systems whose mtimes lie', async (t) => {
    const { dir, dsw, pool, watcher, tick } = setup(t, { useFsWatch: false });
    const { settle } = quietTree(dir);
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
