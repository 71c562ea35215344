/**
 * The writer thread runs 10 nice levels below the rest of the process, so
 * that waking it with a batch does not cost the event loop its core; the
 * process's other threads keep their priority. Linux only (a thread's nice
 * value is read from /proc).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { describe, it } from 'node:test';
import { createTempDir, nodePlugin } from '../testing/index.js';
import { createSqliteStorage } from './index.js';
import { SqliteWriter } from './sqlite-writer.js';

/** Each thread of this process and its nice value (/proc/self/task/<tid>/stat, the 19th field). */
function threadNiceValues(): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // After "pid (comm) ": state is field 3, nice field 19.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    values.set(Number(tid), Number(fields[16]));
  }
  return values;
}

describe('SQLite writer thread priority', {
  skip: !existsSync('/proc/thread-self') && 'needs Linux /proc',
}, () => {
  it('runs the writer thread at nice +10 and leaves every other thread as it was', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    const storage = createSqliteStorage({ path, writerIdleStopMs: false });
    await storage.start();
    await storage.stop();

    const base = getPriority(process.pid);
    const before = threadNiceValues();
    assert.ok(
      [...before.values()].every((nice) => nice === base),
      `no thread is reniced before the writer starts: ${JSON.stringify([...before])}`,
    );

    const writer = new SqliteWriter({ path, busyTimeoutMs: 5000 }, false);
    t.after(() => writer.stop());
    await writer.start();
    assert.ok((await writer.apply([{ op: 'put', info: nodePlugin(1), front: true }])) > 0);

    const after = threadNiceValues();
    const lowered = [...after].filter(([, nice]) => nice !== base);
    assert.equal(lowered.length, 1, `one thread reniced: ${JSON.stringify([...after])}`);
    const [tid, nice] = lowered[0] as [number, number];
    assert.equal(nice, Math.min(19, base + 10));
    assert.equal(before.has(tid), false, 'the reniced thread is the new writer thread');
    assert.equal(getPriority(process.pid), base, 'the main thread keeps its priority');
  });
});
