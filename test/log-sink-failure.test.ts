/**
 * A daemon outlives its log sink (issue 17): `berth run` with stdout and
 * stderr on a full disk (/dev/full: every write fails with ENOSPC), or on
 * pipes whose reader has gone (EPIPE), keeps serving its API, and counts
 * the lines it lost in berth_log_lines_dropped_total.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  BERTH_CLI,
  getOverUnixSocket,
  metricValue,
  spawnModule,
  stopChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

const MAIN = BERTH_CLI;

async function dropped(socketPath: string, stream: 'stdout' | 'stderr'): Promise<number | undefined> {
  const metrics = await getOverUnixSocket(socketPath, '/metrics');
  assert.equal(metrics.status, 200);
  return metricValue(metrics.text, `berth_log_lines_dropped_total{stream="${stream}"}`);
}

describe('a failing log sink', () => {
  it('stdout and stderr on /dev/full (ENOSPC): the daemon serves and counts the lost lines', {
    timeout: 120_000,
  }, async (t) => {
    if (!existsSync('/dev/full')) {
      t.skip('no /dev/full on this system');
      return;
    }
    const dir = createTempDir();
    t.after(() => dir.remove());
    const full = openSync('/dev/full', 'w');
    t.after(() => closeSync(full));
    const socketPath = dir.join('data', 'berth.sock');
    const child = spawnModule(MAIN, ['run', '--data-dir', dir.join('data'), '--log-level', 'debug'], {
      stdio: ['ignore', full, full],
    });
    t.after(() => stopChild(child, 'SIGKILL', 1000));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Ready although no line could be written (the ready line is the one that killed it before).
    await waitFor(
      'the API to answer /readyz',
      async () => {
        if (child.exitCode !== null) throw new Error(`berth exited with ${child.exitCode}`);
        return (await getOverUnixSocket(socketPath, '/readyz').catch(() => undefined))?.status === 200;
      },
      { timeoutMs: 60_000 },
    );
    await waitFor(
      'the ready line counted as dropped',
      async () => ((await dropped(socketPath, 'stdout')) ?? 0) >= 1,
    );
    const lost = (await dropped(socketPath, 'stderr')) ?? 0;
    assert.ok(lost >= 3, `stderr lines dropped: ${lost}`);
    // Still serving, and still counting.
    const health = await getOverUnixSocket(socketPath, '/healthz');
    assert.equal(health.status, 200);
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });

  it('stdout and stderr on pipes whose reader closed (EPIPE): the daemon serves and counts', {
    timeout: 120_000,
  }, async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const children = new Set<ChildProcess>();
    t.after(() => Promise.all([...children].map((c) => stopChild(c, 'SIGKILL', 1000))));
    const socketPath = dir.join('data', 'berth.sock');
    const daemon = trackChild(spawnModule(MAIN, ['run', '--data-dir', dir.join('data')]), children);
    await waitForLine(daemon, 'the start-up line', (line) => line.startsWith('berth: watching'));
    // The reader goes away: every later write to either pipe fails with EPIPE.
    daemon.child.stdout?.destroy();
    daemon.child.stderr?.destroy();
    const before = (await dropped(socketPath, 'stderr')) ?? 0;
    // Each SIGHUP logs one line (the reload's: nothing changed); one at a time, as
    // signals sent together may arrive as one.
    for (const n of [1, 2]) {
      daemon.child.kill('SIGHUP');
      await waitFor(
        `line ${n} counted as dropped`,
        async () => ((await dropped(socketPath, 'stderr')) ?? 0) >= before + n,
      );
    }
    assert.equal(daemon.child.exitCode, null, 'berth is still running');
    assert.equal((await getOverUnixSocket(socketPath, '/readyz')).status, 200);
    daemon.child.kill('SIGTERM');
    assert.equal(await daemon.exited, 0);
  });
});
