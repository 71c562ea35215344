/**
 * The SQLite storage's writes are made durable off the event loop
 * (OffLoopCommit): the commit leaves out its fsync, and the write-ahead log is
 * fdatasynced on libuv's thread pool before the batch counts as written; the
 * log is emptied into the database file once it passes its bound, and the
 * file and the emptied log are synced, off the loop too, before the next
 * commit reuses the log. Seen with strace, in a child process.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { createTempDir, nodePlugin } from '../testing/index.js';
import { createSqliteStorage } from './index.js';
import { WAL_SIZE_LIMIT_BYTES } from './sqlite-wal.js';
import type { RegistryChange } from './types.js';

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

const BATCHES = 120;
/**
 * After these batches a whole-state import follows at once (a synchronous
 * write, which syncs on the loop as SQLite's FULL does): each lands while
 * the checkpoint its batch started waits for its file's sync, since every
 * import of the whole state passes the log's bound by itself.
 */
const IMPORTS_AFTER = [100, 101, 102, 103, 104];

/** One put of a new instance, with options big enough that the log passes its bound within BATCHES. */
function put(seq: number): RegistryChange {
  const info = nodePlugin(seq);
  return { op: 'put', info: { ...info, options: { ...info.options, pad: 'x'.repeat(3000) } }, front: true };
}

/** How many instances a fresh storage on `path` restores (the file read again, as at the next start). */
async function restoredCount(t: TestContext, path: string): Promise<number> {
  const again = createSqliteStorage({ path });
  await again.start();
  t.after(() => again.stop());
  return Object.values(again.getDynamicPluginRegistryState()?.plugins['csi-node'] ?? {}).flat().length;
}

const CHILD = `
import { writeSync } from 'node:fs';
const { createSqliteStorage } = await import(process.env.STORAGE_MODULE);
const { nodePlugin } = await import(process.env.TESTING_MODULE);
const storage = createSqliteStorage({ path: process.env.DB_PATH });
await storage.start();
for (let seq = 1; seq <= ${BATCHES}; seq++) {
  const info = nodePlugin(seq);
  writeSync(1, 'apply ' + seq + '\\n');
  await storage.applyChanges([{ op: 'put', info: { ...info, options: { ...info.options, pad: 'x'.repeat(3000) } }, front: true }]);
  writeSync(1, 'acked ' + seq + '\\n');
  if (${JSON.stringify(IMPORTS_AFTER)}.includes(seq)) {
    writeSync(1, 'import ' + seq + '\\n');
    storage.putDynamicPluginRegistryState(storage.getDynamicPluginRegistryState());
    writeSync(1, 'imported ' + seq + '\\n');
  }
}
await storage.stop();
`;

interface Call {
  at: number;
  thread: string;
  call: string;
}

/** Every traced call in time order, with the path each descriptor named when it was made. */
function readTrace(traceDir: string): (Call & { path: string | undefined })[] {
  const calls: Call[] = readdirSync(traceDir)
    .flatMap((file) =>
      readFileSync(join(traceDir, file), 'utf8')
        .split('\n')
        .filter((line) => line !== '' && !line.includes('<unfinished') && !line.includes('resumed>'))
        .map((line) => {
          const space = line.indexOf(' ');
          return { at: Number(line.slice(0, space)), thread: file.slice(2), call: line.slice(space + 1) };
        }),
    )
    .sort((a, b) => a.at - b.at);
  const open = new Map<string, string>();
  return calls.map((c) => {
    const opened = /^openat\(AT_FDCWD, "([^"]+)", .*\) = (\d+)$/.exec(c.call);
    if (opened?.[1] !== undefined && opened[2] !== undefined) open.set(opened[2], opened[1]);
    const fd = /^\w+\((\d+)[,)]/.exec(c.call)?.[1];
    const path = fd === undefined ? undefined : open.get(fd);
    if (c.call.startsWith('close(') && fd !== undefined) open.delete(fd);
    return { ...c, path };
  });
}

describe('SQLite storage, writes synced off the event loop', () => {
  it('syncs every batch off the loop before its answer, and the checkpointed file before the log is reused', async (t) => {
    if (!requireStrace(t)) return;
    const dir = createTempDir();
    t.after(() => dir.remove());
    const dbPath = dir.join('state.db');
    const wal = `${dbPath}-wal`;
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
        'trace=fsync,fdatasync,openat,close,write,pwrite64,ftruncate',
        process.execPath,
        '--input-type=module',
        '-e',
        CHILD,
      ],
      {
        encoding: 'utf8',
        timeout: 120_000,
        env: {
          ...process.env,
          DB_PATH: dbPath,
          STORAGE_MODULE: new URL('./index.js', import.meta.url).href,
          TESTING_MODULE: new URL('../testing/index.js', import.meta.url).href,
        },
      },
    );
    assert.equal(child.status, 0, `child failed: ${child.stderr}`);
    assert.equal(child.stdout.split('\n').filter((l) => l.startsWith('acked ')).length, BATCHES);

    const calls = readTrace(traceDir);
    // The event loop's thread: the one that writes the markers (child.pid is strace's).
    const mainThread = calls.find((c) => c.call.startsWith('write(1, "apply 1\\n"'))?.thread;
    assert.ok(mainThread !== undefined, 'the first marker was traced');
    const first = calls.findIndex((c) => c.call.startsWith('write(1, "apply 1\\n"'));
    const last = calls.findIndex((c) => c.call.startsWith(`write(1, "acked ${BATCHES}\\n"`));
    const during = calls.slice(first, last + 1);

    // The imports' own syncs are on the loop by design; none other is.
    const imports = IMPORTS_AFTER.map((seq) => ({
      from: calls.find((c) => c.call.startsWith(`write(1, "import ${seq}\\n"`))?.at ?? 0,
      to: calls.find((c) => c.call.startsWith(`write(1, "imported ${seq}\\n"`))?.at ?? 0,
    }));
    const inImport = (c: Call) => imports.some(({ from, to }) => c.at >= from && c.at <= to);
    const mainSyncs = during.filter(
      (c) => c.thread === mainThread && /^f(data)?sync\(/.test(c.call) && !inImport(c),
    );
    assert.deepEqual(mainSyncs, [], 'the event loop made no fsync while the batches were written');

    const offLoopSync = (c: Call & { path: string | undefined }, path: string) =>
      c.thread !== mainThread && c.path === path && /^fdatasync\(\d+\)\s*= 0$/.test(c.call);
    // Every log write of a batch is followed by an off-loop fdatasync of the log before its answer.
    for (let seq = 1; seq <= BATCHES; seq++) {
      const from = calls.findIndex((c) => c.call.startsWith(`write(1, "apply ${seq}\\n"`));
      const to = calls.findIndex((c) => c.call.startsWith(`write(1, "acked ${seq}\\n"`));
      const batch = calls.slice(from, to);
      const lastLogWrite = batch.findLastIndex((c) => c.path === wal && c.call.startsWith('pwrite64('));
      assert.ok(lastLogWrite >= 0, `batch ${seq} wrote the log`);
      assert.ok(
        batch.slice(lastLogWrite + 1).some((c) => offLoopSync(c, wal)),
        `batch ${seq}: the log was fdatasynced off the loop after its last write and before the answer`,
      );
    }
    // The first log's directory entry was synced too (SQLite does it for a new log).
    assert.ok(
      during.some((c) => offLoopSync(c, dir.path)),
      "the log's directory was fdatasynced off the loop",
    );

    // The log passed its bound and was emptied, in SQLite's order: the file synced before the log was
    // emptied, and the emptied log synced before it was written again.
    const truncations = during
      .map((c, i) => ({ c, i }))
      .filter(({ c }) => c.path === wal && /^ftruncate\(\d+, 0\)\s*= 0$/.test(c.call));
    assert.ok(truncations.length >= 1, 'the log was checkpointed and emptied at least once');
    for (const { i } of truncations) {
      // The checkpoint's copy into the file is durable before the log that held it is emptied.
      const lastFileWrite = during.findLastIndex(
        (c, j) => j < i && c.path === dbPath && c.call.startsWith('pwrite64('),
      );
      assert.ok(lastFileWrite >= 0, 'the checkpoint wrote the database file');
      assert.ok(
        during.slice(lastFileWrite + 1, i).some((c) => offLoopSync(c, dbPath)),
        'the database file was fdatasynced off the loop after the checkpoint wrote it and before the log was emptied',
      );
      const reuse = during.findIndex((c, j) => j > i && c.path === wal && c.call.startsWith('pwrite64('));
      if (reuse < 0) continue; // the last checkpoint, after the last batch
      assert.ok(
        during.slice(i + 1, reuse).some((c) => offLoopSync(c, wal)),
        'the emptied log was fdatasynced off the loop before it was written again, so no older frame can outlive the reuse',
      );
    }

    assert.equal(await restoredCount(t, dbPath), BATCHES, 'every batch is there for the next start');
  });

  it('keeps the log within its bound through many batches', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    const storage = createSqliteStorage({ path });
    await storage.start();
    t.after(() => storage.stop());
    let largest = 0;
    for (let seq = 1; seq <= 400; seq++) {
      await storage.applyChanges([put(seq)]);
      largest = Math.max(largest, statSync(`${path}-wal`).size);
    }
    // The bound, plus the one batch that passed it (a few pages).
    assert.ok(largest <= WAL_SIZE_LIMIT_BYTES + 64 * 1024, `the log grew to ${largest} bytes`);
    assert.ok(largest > 0);
    await storage.stop();
    assert.equal(await restoredCount(t, path), 400, 'every batch is there');
  });

  it("goes on writing, without waiting, while another connection's reader keeps the log from being emptied", async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    // A checkpoint that waited for the reader would wait this long: the test would time out.
    const storage = createSqliteStorage({ path, busyTimeoutMs: 600_000 });
    await storage.start();
    t.after(() => storage.stop());
    await storage.applyChanges([put(0)]);

    const reader = new BetterSqlite3(path, { readonly: true });
    t.after(() => reader.close());
    reader.prepare('BEGIN').run();
    reader.prepare('SELECT count(*) FROM sqlite_master').get();
    let seq = 1;
    for (; seq <= 200; seq++) await storage.applyChanges([put(seq)]);
    assert.ok(
      statSync(`${path}-wal`).size > WAL_SIZE_LIMIT_BYTES,
      'the reader kept the log from being emptied',
    );

    reader.prepare('COMMIT').run();
    let emptied = false;
    for (; seq <= 400 && !emptied; seq++) {
      await storage.applyChanges([put(seq)]);
      emptied = statSync(`${path}-wal`).size < WAL_SIZE_LIMIT_BYTES;
    }
    assert.ok(emptied, 'with the reader gone, the next checkpoint emptied the log');
    await storage.stop();
    assert.equal(await restoredCount(t, path), seq, 'every batch is there');
  });
});
