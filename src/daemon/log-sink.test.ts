import assert from 'node:assert/strict';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { describe, it } from 'node:test';
import { mkfifo } from '../testing/harness/index.js';
import { createTempDir } from '../testing/index.js';
import { LogSink } from './log-sink.js';

const LINE = 1024;
const line = (i: number) => `${String(i).padEnd(LINE - 1)}\n`;

/** Reads what the pipe holds now (non-blocking). */
function drain(fd: number): string {
  const buffer = Buffer.alloc(1 << 16);
  let out = '';
  for (;;) {
    try {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) return out;
      out += buffer.subarray(0, n).toString('utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return out;
      throw err;
    }
  }
}

describe('log sink', () => {
  it('queues lines for a pipe that would block, up to its bound, drops and counts the rest, and keeps the order', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    mkfifo(dir.join('pipe'));
    // O_RDWR: this fd is both the reader and the writer of a real kernel pipe buffer.
    const fd = openSync(dir.join('pipe'), constants.O_RDWR | constants.O_NONBLOCK);
    t.after(() => closeSync(fd));
    const sink = new LogSink(fd, { maxPendingBytes: 16 * LINE });
    const total = 200;
    for (let i = 0; i < total; i++) sink.write(line(i));
    assert.equal(sink.lastError, 'EAGAIN');
    assert.equal(sink.pendingBytes, 16 * LINE);
    assert.ok(sink.dropped > 0, 'past the bound, lines are dropped');
    let received = '';
    while (sink.pendingBytes > 0) {
      received += drain(fd);
      sink.flush();
    }
    received += drain(fd);
    const got = received.split('\n').filter((l) => l !== '');
    assert.equal(got.length, total - sink.dropped);
    // Everything that arrived came in order, with nothing missing before the drops began.
    assert.deepEqual(
      got.map((l) => Number(l.trim())),
      Array.from({ length: got.length }, (_, i) => i),
    );
  });

  it('never throws on a bad descriptor; it counts the line', () => {
    // Far above any descriptor this process has open, so nothing real is written to.
    const sink = new LogSink(1_000_000);
    sink.write('lost\n');
    assert.equal(sink.dropped, 1);
    assert.equal(sink.lastError, 'EBADF');
  });
});
