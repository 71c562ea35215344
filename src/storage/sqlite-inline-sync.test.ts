/**
 * The batch a SQLite storage writes on its own connection (no writer thread
 * yet: `writerStart: 'first-write'`, or after an idle stop) is made durable
 * off the event loop: its commit leaves out the fsync, and the write-ahead log
 * is synced on libuv's thread pool before the batch counts as written. Seen
 * with strace, in a child process: between the call and its answer the main
 * thread makes no fsync, and another thread fdatasyncs the log (and its
 * directory) before the answer.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it, type TestContext } from 'node:test';
import { createTempDir } from '../testing/index.js';
import { createSqliteStorage } from './index.js';

/** Why strace cannot trace a child here, or undefined when it can (CI installs it: .ci/run). */
function straceUnavailable(): string | undefined {
  const probe = spawnSync('strace', ['-f', '-o', '/dev/null', 'true'], { encoding: 'utf8' });
  if (probe.error) {
    if (process.env.CI)
      throw new Error(`strace is missing (CI must install it: see .ci/run): ${probe.error.message}`);
    return `strace cannot run: ${probe.error.message}`;
  }
  if (probe.status !== 0) return `strace cannot trace here (ptrace refused?): ${probe.stderr.trim()}`;
  return undefined;
}

function requireStrace(t: TestContext): boolean {
  const missing = straceUnavailable();
  if (missing === undefined) return true;
  t.skip(`skipped: ${missing}`);
  return false;
}

const CHILD = `
import { writeSync } from 'node:fs';
const { createSqliteStorage } = await import(process.env.STORAGE_MODULE);
const { nodePlugin } = await import(process.env.TESTING_MODULE);
const storage = createSqliteStorage({ path: process.env.DB_PATH, writerStart: 'first-write', writerIdleStopMs: false });
await storage.start();
writeSync(1, 'apply\\n');
await storage.applyChanges([{ op: 'put', info: nodePlugin(1), front: true }]);
writeSync(1, 'acked ' + storage.writeStats.inlineTransactions + '\\n');
await storage.stop();
`;

it('an inline batch is synced off the event loop, before it is acknowledged', async (t) => {
  if (!requireStrace(t)) return;
  const dir = createTempDir();
  t.after(() => dir.remove());
  const dbPath = dir.join('state.db');
  const traceDir = dir.join('trace');
  mkdirSync(traceDir);
  // -ff: one file per thread, so no call is split over lines by another thread's; -ttt orders them.
  const child = spawnSync(
    'strace',
    [
      '-ff',
      '-ttt',
      '-o',
      join(traceDir, 't'),
      '-e',
      'trace=fsync,fdatasync,openat,write',
      process.execPath,
      '--input-type=module',
      '-e',
      CHILD,
    ],
    {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        ...process.env,
        DB_PATH: dbPath,
        STORAGE_MODULE: new URL('./index.js', import.meta.url).href,
        TESTING_MODULE: new URL('../testing/index.js', import.meta.url).href,
      },
    },
  );
  assert.equal(child.status, 0, `child failed: ${child.stderr}`);
  assert.equal(child.stdout, 'apply\nacked 1\n', 'the batch went on the main connection');

  // Every traced call as [time, thread, call], in time order.
  const calls = readdirSync(traceDir)
    .flatMap((file) =>
      readFileSync(join(traceDir, file), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const space = line.indexOf(' ');
          return { at: Number(line.slice(0, space)), thread: file.slice(2), call: line.slice(space + 1) };
        }),
    )
    .sort((a, b) => a.at - b.at);
  // The event loop's thread: the one that wrote the markers (child.pid is strace's).
  const from = calls.findIndex((c) => c.call.startsWith('write(1, "apply'));
  const mainThread = calls[from]?.thread;
  const to = calls.findIndex((c) => c.thread === mainThread && c.call.startsWith('write(1, "acked'));
  assert.ok(from >= 0 && to > from, 'both markers traced, in order');
  const between = calls.slice(from, to);

  const mainSyncs = between.filter((c) => c.thread === mainThread && /^f(data)?sync\(/.test(c.call));
  assert.deepEqual(mainSyncs, [], 'the event loop made no fsync for the batch');

  /** The non-main thread's open of `path` (read-only) and a later fdatasync of that descriptor, before the answer. */
  const syncedOffLoop = (path: string): boolean => {
    const opened = between.findIndex(
      (c) => c.call.startsWith(`openat(AT_FDCWD, "${path}", O_RDONLY`) && c.thread !== mainThread,
    );
    const fd = opened < 0 ? undefined : / = (\d+)$/.exec(between[opened]?.call ?? '')?.[1];
    if (fd === undefined) return false;
    return between
      .slice(opened + 1)
      .some(
        (c) => c.thread !== mainThread && c.call.startsWith(`fdatasync(${fd})`) && c.call.endsWith('= 0'),
      );
  };
  assert.ok(syncedOffLoop(`${dbPath}-wal`), 'the log was fdatasynced on the thread pool before the answer');
  assert.ok(syncedOffLoop(dir.path), "and its directory's entry");

  // And the batch is there for the next start.
  const again = createSqliteStorage({ path: dbPath });
  await again.start();
  t.after(() => again.stop());
  assert.deepEqual(
    again.getDynamicPluginRegistryState()?.plugins['csi-node']?.['my-plugin']?.map((i) => i.allocId),
    ['alloc-1'],
  );
});
