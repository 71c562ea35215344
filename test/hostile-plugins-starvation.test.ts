/**
 * Starvation by a crowd of bad plugins (issue 17): 70 CSI drivers whose
 * NodeGetInfo never returns, or 70 listeners that accept and never speak
 * HTTP/2, beside a churn of 20 good plugins. The good plugins' median
 * registration latency stays within 3x of a baseline measured in the same
 * case, and a fresh plugin that appears while the crowd holds everything it
 * can registers within 1 s.
 *
 * The crowd (test/fixtures/hostile-crowd.ts) runs in its own process. The
 * daemon has the kubelet's deadlines (dial 10 s, CSI calls 2 min), so every
 * crowd attempt is still in flight during the measured churn, as in the issue;
 * the slow lane the crowd's retries go to is tested in src/executor/lanes.test.ts.
 *
 * Timing on a loaded 2-core machine: the baseline is measured before the crowd
 * starts and again after it is gone, the larger taken, and floored at 100 ms
 * (hostile-harness.ts says why: a quiet registration takes 10-45 ms, and
 * scheduler noise on a busy machine would otherwise fail a case against a
 * baseline that happened to be a few milliseconds). The 1 s bound on the
 * fresh plugin is for a machine where that baseline holds; it scales with the
 * baseline when the machine itself is slower (the same factor for both).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import type { Daemon } from '../src/daemon/index.js';
import { DEFAULT_MAX_CONCURRENT_REGISTRATIONS } from '../src/executor/index.js';
import { createExamplePlugin } from '../src/registration/index.js';
import { siblingModule, spawnModule, stopChild } from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';
import {
  BASELINE_FLOOR_MS,
  churn,
  median,
  OUTCOME_DEADLINE_MS,
  removeHostileSockets,
  sockets,
  startDaemon,
  TYPE,
} from './fixtures/hostile-harness.js';

const CROWD = siblingModule(import.meta.url, './fixtures/hostile-crowd');
const CROWD_SIZE = 70;
/** The main lane's slots: the crowd can fill them all. */
const SLOTS = DEFAULT_MAX_CONCURRENT_REGISTRATIONS;
/**
 * Each of the three churns (before, beside the crowd, after) runs at least this long, so the
 * three see the same stretch of machine load (with 3 rounds before and after but 6 s beside, a
 * load spike only the longer window caught failed runs).
 */
const WINDOW_MS = 6_000;
const FRESH_GOAL_MS = 1_000;

/** Bind to Notify(true) of one plugin that was not there before. */
async function freshPluginMs(daemon: Daemon): Promise<number> {
  const plugin = createExamplePlugin({
    socketPath: join(daemon.config.pluginsDir, 'fresh.sock'),
    name: 'fresh',
    type: TYPE,
    versions: ['v1beta1'],
  });
  try {
    await plugin.start();
    const began = performance.now();
    const status = await plugin.nextStatus(OUTCOME_DEADLINE_MS);
    assert.equal(status.pluginRegistered, true, status.error);
    return performance.now() - began;
  } finally {
    await plugin.stop();
  }
}

async function starvationCase(mode: 'csi-hang' | 'silent', busyLine: string): Promise<void> {
  // The daemon runs in this process: a listener added per call on a long-lived signal shows here.
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  await using dir = createTempDir('berth-starve-');
  // The kubelet's deadlines (berth's defaults): a crowd attempt stays in flight the whole window.
  const daemon = await startDaemon(dir, { timeouts: { dial: 10_000, getInfo: 1_000, notify: 5_000 } });
  let crowd: ReturnType<typeof spawnModule> | undefined;
  try {
    const before = median(await churn(daemon, 0, WINDOW_MS));
    crowd = spawnModule(CROWD, [mode, daemon.config.pluginsDir, String(CROWD_SIZE)]);
    const lines: string[] = [];
    let stderr = '';
    crowd.stderr?.on('data', (chunk) => (stderr += chunk));
    if (crowd.stdout) createInterface({ input: crowd.stdout }).on('line', (l) => lines.push(l));
    // The crowd is in: at least as many of them are being worked on as there are slots.
    await waitFor(
      `${SLOTS} of the crowd to be busy`,
      () => {
        if (crowd !== undefined && crowd.exitCode !== null) throw new Error(`the crowd exited: ${stderr}`);
        return lines.filter((l) => l === busyLine).length >= SLOTS;
      },
      { timeoutMs: OUTCOME_DEADLINE_MS, intervalMs: 5 },
    );
    const fresh = await freshPluginMs(daemon);
    const during = median(await churn(daemon, 1_000, WINDOW_MS));
    // The crowd is still there and still failing: none of it registered.
    const crowdSockets = (await sockets(daemon)).filter((s) => s.socketPath.includes('/hostile-'));
    assert.equal(crowdSockets.length, CROWD_SIZE);
    assert.equal(crowdSockets.filter((s) => s.state === 'registered').length, 0);
    await stopChild(crowd, 'SIGKILL');
    await removeHostileSockets(daemon);
    const after = median(await churn(daemon, 2_000, WINDOW_MS));
    const baseline = Math.max(before, after, BASELINE_FLOOR_MS);
    const report = `${mode}: fresh ${fresh.toFixed(0)} ms, p50 during ${during.toFixed(1)} ms, before ${before.toFixed(1)} ms, after ${after.toFixed(1)} ms`;
    process.stdout.write(`# ${report}\n`);
    assert.ok(
      during <= 3 * baseline,
      `${report}: p50 is more than 3x the baseline ${baseline.toFixed(1)} ms`,
    );
    assert.deepEqual(
      warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
      [],
    );
    const freshLimit = FRESH_GOAL_MS * (baseline / BASELINE_FLOOR_MS);
    assert.ok(fresh <= freshLimit, `${report}: the fresh plugin took more than ${freshLimit.toFixed(0)} ms`);
  } finally {
    if (crowd !== undefined) await stopChild(crowd, 'SIGKILL');
    await daemon.stop();
    process.off('warning', onWarning);
  }
}

describe('hostile plugins: a crowd of 70 does not starve the others', { concurrency: false }, () => {
  it('70 CSI drivers whose NodeGetInfo never returns', () => starvationCase('csi-hang', 'call NodeGetInfo'));

  it('70 listeners that accept and never speak HTTP/2', () => starvationCase('silent', 'accepted'));
});
