import assert from 'node:assert/strict';
import {
  chmodSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { createDesiredStateOfWorld } from '../cache/index.js';
import { BerthError } from '../common/index.js';
import { createRecordingLogger, type LogRecord, mkfifo, SocketPool } from '../testing/harness/index.js';
import { createTempDir, waitFor } from '../testing/index.js';
import { createPluginWatcher } from './index.js';
import type { PluginWatcherOptions } from './plugin-watcher-options.js';

/**
 * These tests run with the periodic rescan disabled, so everything found after
 * start is found by the fs watch alone (the rescan has its own tests).
 */
function setup(t: TestContext, overrides: Partial<PluginWatcherOptions> = {}) {
  const tmp = createTempDir('bw-');
  const dir = tmp.join('registry');
  const dsw = createDesiredStateOfWorld();
  const logger = createRecordingLogger();
  const pool = new SocketPool();
  const watcher = createPluginWatcher({ dir, desiredState: dsw, logger, rescanIntervalMs: 0, ...overrides });
  t.after(async () => {
    await watcher.stop();
    await pool.closeAll();
    tmp.remove();
  });
  const paths = () =>
    dsw
      .getPluginsToRegister()
      .map((info) => info.socketPath)
      .sort();
  return { tmp, dir, dsw, logger, pool, watcher, paths };
}

function problems(records: LogRecord[]): LogRecord[] {
  return records.filter((record) => record.level === 'warn' || record.level === 'error');
}

describe('plugin watcher: discovery through fs.watch', () => {
  it('registers and unregisters plugins one after another (x10)', async (t) => {
    const { dir, dsw, pool, watcher, logger } = setup(t);
    await watcher.start();
    for (let i = 0; i < 10; i++) {
      const path = join(dir, `plugin-${i}.sock`);
      const plugin = await pool.serve(path);
      await waitFor(`${path} in the desired state`, () => dsw.pluginExists(path));
      assert.equal(dsw.getPluginsToRegister().length, 1);
      await plugin.close();
      await waitFor(`${path} gone from the desired state`, () => !dsw.pluginExists(path));
      assert.equal(dsw.getPluginsToRegister().length, 0);
    }
    assert.deepEqual(problems(logger.records), [], 'nothing in a normal run is logged above info');
  });

  it('keeps ten sockets side by side (the plugin name plays no part)', async (t) => {
    const { dir, dsw, pool, watcher } = setup(t);
    await watcher.start();
    for (let i = 0; i < 10; i++) {
      const path = join(dir, `plugin-${i}.sock`);
      await pool.serve(path);
      await waitFor(`${path} in the desired state`, () => dsw.pluginExists(path));
      assert.equal(dsw.getPluginsToRegister().length, i + 1);
    }
    assert.equal(watcher.knownSockets().length, 10);
  });

  it('gives a socket re-created on the same path a new generation each time (x10)', async (t) => {
    const { dir, dsw, pool, watcher } = setup(t);
    await watcher.start();
    const path = join(dir, 'plugin-reregistration.sock');
    let plugin = await pool.serve(path);
    let previous = await waitFor('first generation', () => dsw.get(path));
    for (let i = 0; i < 10; i++) {
      await plugin.close();
      await waitFor(`${path} removed (round ${i})`, () => !dsw.pluginExists(path));
      plugin = await pool.serve(path);
      const next = await waitFor(`${path} back (round ${i})`, () => dsw.get(path));
      assert.notEqual(next.uuid, previous.uuid);
      assert.ok(next.timestamp >= previous.timestamp);
      assert.equal(dsw.getPluginsToRegister().length, 1);
      previous = next;
    }
  });

  it('notices a re-created socket even when removal and creation arrive together', async (t) => {
    const { dir, dsw, pool, watcher } = setup(t);
    await watcher.start();
    const path = join(dir, 'quick.sock');
    let plugin = await pool.serve(path);
    let previous = await waitFor('first generation', () => dsw.get(path));
    for (let i = 0; i < 5; i++) {
      // No wait in between: the file is very likely re-created with the same inode number.
      await plugin.close();
      plugin = await pool.serve(path);
      const before = previous;
      previous = await waitFor(`a new generation (round ${i})`, () => {
        const info = dsw.get(path);
        return info !== undefined && info.uuid !== before.uuid ? info : undefined;
      });
    }
    assert.deepEqual(watcher.knownSockets(), [path]);
  });

  it('finds the ten sockets that exist before start, by the time start resolves', async (t) => {
    const { dir, dsw, pool, watcher, paths } = setup(t);
    mkdirSync(dir, { recursive: true });
    const expected: string[] = [];
    for (let i = 0; i < 10; i++) {
      const path = join(dir, `plugin-${i}.sock`);
      await pool.serve(path);
      expected.push(path);
    }
    await watcher.start();
    await watcher.ready;
    assert.deepEqual(paths(), expected.sort());
    assert.deepEqual(watcher.knownSockets(), expected);
    for (const info of dsw.getPluginsToRegister()) assert.equal(info.foundInDeprecatedDir, false);
  });

  it('finds sockets in directories created after start, at depth 0, 1 and 2', async (t) => {
    const { dir, dsw, pool, watcher } = setup(t);
    await watcher.start();
    for (let depth = 0; depth <= 2; depth++) {
      const nested = join(dir, ...['0', '1'].slice(0, depth));
      mkdirSync(nested, { recursive: true });
      const path = join(nested, `plugin-${depth}.sock`);
      await pool.serve(path);
      await waitFor(`${path} in the desired state`, () => dsw.pluginExists(path));
    }
    // A socket created the moment its directory appears, before any watch on it can exist.
    const fresh = join(dir, 'a', 'b', 'c');
    mkdirSync(fresh, { recursive: true });
    const immediate = join(fresh, 'immediate.sock');
    await pool.serve(immediate);
    await waitFor(`${immediate} in the desired state`, () => dsw.pluginExists(immediate));
    assert.equal(dsw.getPluginsToRegister().length, 4);
  });

  it('adds the sockets of a directory renamed in, and removes a deleted directory’s sockets', async (t) => {
    const { tmp, dir, dsw, pool, watcher } = setup(t);
    await watcher.start();
    const staging = tmp.join('staging', 'group');
    mkdirSync(join(staging, 'inner'), { recursive: true });
    await pool.serve(join(staging, 'one.sock'));
    await pool.serve(join(staging, 'inner', 'two.sock'));
    renameSync(staging, join(dir, 'group'));
    const one = join(dir, 'group', 'one.sock');
    const two = join(dir, 'group', 'inner', 'two.sock');
    await waitFor(
      'both sockets of the renamed-in directory',
      () => dsw.pluginExists(one) && dsw.pluginExists(two),
    );
    rmSync(join(dir, 'group'), { recursive: true, force: true });
    await waitFor(
      'the deleted directory’s sockets gone',
      () => !dsw.pluginExists(one) && !dsw.pluginExists(two),
    );
    assert.deepEqual(watcher.knownSockets(), []);
  });

  it('ignores dot-prefixed sockets and everything inside dot directories, at start and later', async (t) => {
    const { dir, pool, watcher, paths } = setup(t);
    mkdirSync(join(dir, '.early-dir'), { recursive: true });
    await pool.serve(join(dir, '.early.sock'));
    await pool.serve(join(dir, '.early-dir', 'inside.sock'));
    await watcher.start();
    assert.deepEqual(paths(), []);

    await pool.serve(join(dir, '.hidden.sock'));
    mkdirSync(join(dir, '.dot', 'sub'), { recursive: true });
    await pool.serve(join(dir, '.dot', 'sub', 'deep.sock'));
    mkdirSync(join(dir, 'visible', '.inner'), { recursive: true });
    await pool.serve(join(dir, 'visible', '.inner', 'x.sock'));
    await pool.serve(join(dir, 'visible', '.y.sock'));
    // Barrier: events are handled in order, and a rescan re-walks everything.
    const barrier = join(dir, 'visible', 'barrier.sock');
    await pool.serve(barrier);
    await waitFor('the barrier socket', () => paths().includes(barrier));
    await watcher.rescan();
    assert.deepEqual(paths(), [barrier]);
    assert.deepEqual(watcher.knownSockets(), [barrier]);
  });

  it('ignores regular files, FIFOs and symlinks to non-sockets; follows a symlink to a socket', async (t) => {
    const { tmp, dir, dsw, pool, watcher, paths, logger } = setup(t);
    const outside = tmp.join('outside');
    mkdirSync(join(outside, 'linked-dir'), { recursive: true });
    await pool.serve(join(outside, 'linked-dir', 'behind-dir-link.sock'));
    const target = await pool.serve(join(outside, 'target.sock'));
    await watcher.start();

    writeFileSync(join(dir, 'regular.sock'), 'not a socket');
    mkfifo(join(dir, 'fifo.sock'));
    symlinkSync(join(dir, 'regular.sock'), join(dir, 'link-to-file.sock'));
    symlinkSync(join(outside, 'missing.sock'), join(dir, 'dangling.sock'));
    symlinkSync(join(outside, 'linked-dir'), join(dir, 'dir-link'));
    const link = join(dir, 'link-to-socket.sock');
    symlinkSync(target.path, link);
    const barrier = join(dir, 'barrier.sock');
    await pool.serve(barrier);
    await waitFor('the barrier socket', () => dsw.pluginExists(barrier));
    await watcher.rescan();
    assert.deepEqual(paths(), [barrier, link].sort());
    assert.ok(
      logger.records.some(
        (record) => record.level === 'debug' && record.message === 'ignoring non-socket file',
      ),
    );
    assert.deepEqual(problems(logger.records), []);

    // The link's target goes away: nothing inside the tree changes, so only a rescan can tell.
    await target.close();
    await watcher.rescan();
    assert.deepEqual(paths(), [barrier]);
  });

  it('removes a socket renamed away (unlike the kubelet) and adds one renamed in', async (t) => {
    const { tmp, dir, dsw, pool, watcher } = setup(t);
    await watcher.start();
    const outside = tmp.join('outside');
    mkdirSync(outside);
    await pool.serve(join(outside, 'moving.sock'));
    const inside = join(dir, 'moving.sock');
    renameSync(join(outside, 'moving.sock'), inside);
    await waitFor('the renamed-in socket', () => dsw.pluginExists(inside));

    const renamed = join(dir, 'renamed.sock');
    renameSync(inside, renamed);
    await waitFor(
      'old name gone, new name present',
      () => !dsw.pluginExists(inside) && dsw.pluginExists(renamed),
    );

    renameSync(renamed, join(outside, 'gone.sock'));
    await waitFor('the renamed-away socket removed', () => !dsw.pluginExists(renamed));

    // A socket replaced in place by a regular file is no longer a plugin.
    const replaced = join(dir, 'replaced.sock');
    await pool.serve(replaced);
    await waitFor('the socket to be replaced', () => dsw.pluginExists(replaced));
    writeFileSync(join(dir, 'plain'), 'x');
    renameSync(join(dir, 'plain'), replaced);
    await waitFor('the replaced socket removed', () => !dsw.pluginExists(replaced));
    assert.deepEqual(watcher.knownSockets(), []);
  });

  it('does not start a new generation for attribute changes, duplicate events or rescans', async (t) => {
    const { dir, dsw, pool, watcher } = setup(t);
    await watcher.start();
    const path = join(dir, 'steady.sock');
    await pool.serve(path);
    const first = await waitFor('the socket', () => dsw.get(path));
    const changes: string[] = [];
    dsw.onChange((changed) => changes.push(changed));

    // Without a birth time the change time stands in for identity, and chmod moves it (see inspect-path.ts).
    const hasBirthTime = statSync(path, { bigint: true }).birthtimeNs > 0n;
    if (hasBirthTime) {
      chmodSync(path, 0o700);
      const now = new Date();
      utimesSync(path, now, now);
    } else {
      t.diagnostic('file system has no birth time: only rescans are checked');
    }
    const barrier = join(dir, 'barrier.sock');
    await pool.serve(barrier);
    await waitFor('the barrier socket', () => dsw.pluginExists(barrier));
    await watcher.rescan();
    await watcher.rescan();
    assert.equal(dsw.get(path)?.uuid, first.uuid);
    assert.equal(dsw.get(path)?.timestamp, first.timestamp);
    assert.deepEqual(changes, [barrier], 'the only change is the barrier being added');
  });
});

describe('plugin watcher: lifecycle', () => {
  it('creates the directory with mode 0755 and resolves ready', async (t) => {
    const { dir, watcher } = setup(t);
    assert.equal(watcher.state, 'new');
    await watcher.start();
    await watcher.ready;
    assert.equal(watcher.state, 'running');
    const stats = statSync(dir);
    assert.ok(stats.isDirectory());
    assert.equal(stats.mode & 0o022, 0, 'not group- or world-writable');
  });

  it('fails to start when the directory cannot be created, with the upstream message', async (t) => {
    const tmp = createTempDir('bw-');
    t.after(() => tmp.remove());
    writeFileSync(tmp.join('file'), '');
    const dir = tmp.join('file', 'registry');
    const watcher = createPluginWatcher({ dir, desiredState: createDesiredStateOfWorld() });
    const isRootError = (err: unknown) =>
      err instanceof BerthError &&
      err.code === 'BERTH_WATCHER_FAILED' &&
      err.message.startsWith(`error (re-)creating root ${dir}: `);
    await assert.rejects(watcher.start(), isRootError);
    await assert.rejects(watcher.ready, isRootError);
    assert.equal(watcher.state, 'stopped');
  });

  it('stop is idempotent, also through asyncDispose, and a stopped watcher refuses work', async (t) => {
    const { watcher } = setup(t);
    await watcher.start();
    await Promise.all([watcher.stop(), watcher.stop()]);
    await watcher[Symbol.asyncDispose]();
    assert.equal(watcher.state, 'stopped');
    const shutDown = (err: unknown) => err instanceof BerthError && err.code === 'BERTH_SHUT_DOWN';
    await assert.rejects(watcher.rescan(), shutDown);
    await assert.rejects(watcher.start(), shutDown);
  });

  it('rejects ready when stopped before start, and start with an aborted signal', async (t) => {
    const first = setup(t).watcher;
    await first.stop();
    await assert.rejects(
      first.ready,
      (err: unknown) => err instanceof BerthError && err.code === 'BERTH_SHUT_DOWN',
    );

    const second = setup(t).watcher;
    await assert.rejects(
      second.start(AbortSignal.abort()),
      (err: unknown) => err instanceof BerthError && err.code === 'BERTH_ABORTED',
    );
    assert.equal(second.state, 'stopped');
  });

  it('stops when the start signal is aborted', async (t) => {
    const { watcher } = setup(t);
    const controller = new AbortController();
    await watcher.start(controller.signal);
    controller.abort();
    await waitFor('the watcher to stop', () => watcher.state === 'stopped');
  });

  it('rejects bad options with a clear error', () => {
    const desiredState = createDesiredStateOfWorld();
    const invalid = (message: RegExp) => (err: unknown) =>
      err instanceof BerthError && err.code === 'BERTH_INVALID_ARGUMENT' && message.test(err.message);
    assert.throws(
      () => createPluginWatcher({ dir: '', desiredState }),
      invalid(/dir must be a non-empty path/),
    );
    assert.throws(
      () => createPluginWatcher({ dir: '/tmp/x', desiredState, rescanIntervalMs: -1 }),
      invalid(/rescanIntervalMs/),
    );
    assert.throws(
      () => createPluginWatcher({ dir: '/tmp/x', deprecatedDir: '/tmp/x/', desiredState }),
      invalid(/deprecatedDir must differ from dir/),
    );
  });
});
