/**
 * `berth run` from the build's bundle with its V8 code cache
 * (src/cli/code-cache.ts), through the real bin: a start without a cache
 * writes one once ready, the next start uses it, and a damaged cache never
 * stops a start (it is skipped, said so in the debug log, and rewritten).
 * The cache goes to the test's own directory ($BERTH_CODE_CACHE_DIR).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { DAEMON_INTERRUPT_BUDGET, hasInterruptBudgetFlag } from '../src/cli/jit-options.js';
import {
  BERTH_CLI,
  spawnModule,
  stopChild,
  type TrackedChild,
  trackChild,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

const MAIN = BERTH_CLI;
const BUNDLE_DIR = new URL('../bundle/', import.meta.url);

function readyz(socketPath: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/readyz' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', () => resolve(0));
    req.end();
  });
}

/** The first log line (stderr) with this message. */
function logLine(proc: TrackedChild, msg: string): Promise<string> {
  return waitFor(
    msg,
    () => {
      const line = proc.stderr.find((l) => l.includes(`"msg":"${msg}"`));
      if (line === undefined && proc.child.exitCode !== null) {
        throw new Error(`berth run exited (${proc.child.exitCode}): ${proc.stderr.slice(-5).join(' | ')}`);
      }
      return line;
    },
    { timeoutMs: 60_000 },
  );
}

/** One `berth run` until ready and until its code-cache debug lines are out; returns those lines. */
async function startOnce(dataDir: string, cacheDir: string, expectWrite: boolean) {
  const children = new Set<ChildProcess>();
  const daemon = trackChild(
    spawnModule(MAIN, ['run', '--data-dir', dataDir, '--log-level', 'debug', '--log-format', 'json'], {
      env: { ...process.env, BERTH_DATA_DIR: dataDir, BERTH_CODE_CACHE_DIR: cacheDir },
    }),
    children,
  );
  try {
    const loaded = await logLine(daemon, 'daemon module loaded');
    await waitFor('readyz', async () => (await readyz(join(dataDir, 'berth.sock'))) === 200, {
      timeoutMs: 60_000,
    });
    const saved = expectWrite ? await logLine(daemon, 'daemon code cache') : undefined;
    const tuning = await logLine(daemon, 'daemon JIT tuning');
    return {
      loaded: JSON.parse(loaded),
      saved: saved === undefined ? undefined : JSON.parse(saved),
      tuning: JSON.parse(tuning),
    };
  } finally {
    await stopChild(daemon.child);
  }
}

test('berth run writes its code cache once ready, uses it next time, and starts past a damaged one', async (t) => {
  const manifest = new URL('daemon-bundle.json', BUNDLE_DIR);
  if (!existsSync(manifest)) {
    t.skip('no daemon bundle (run `npm run build`)');
    return;
  }
  const { file } = JSON.parse(readFileSync(manifest, 'utf8')) as { file: string };
  await using dir = createTempDir('berth-code-cache-');
  const cacheDir = dir.join('cache');
  const cache = join(cacheDir, `${file}.v8cache`);

  // No cache yet: the bundle compiles from source, and the cache is written after ready.
  const first = await startOnce(dir.join('one'), cacheDir, true);
  assert.equal(first.loaded.codeCache, 'none');
  // The daemon's JIT tuning is in force once the cache is written (src/cli/jit-options.ts);
  // the next start using that cache shows it was written under the flags a start loads with.
  assert.equal(
    first.tuning.interruptBudget,
    hasInterruptBudgetFlag(process.versions.v8) ? DAEMON_INTERRUPT_BUDGET : 'v8-default',
  );
  assert.match(first.loaded.daemonModule, new RegExp(`${file.replace('.', '\\.')}$`));
  assert.equal(first.saved.codeCacheWritten, cache);
  assert.deepEqual(readdirSync(cacheDir), [`${file}.v8cache`]);

  // The next start uses it and writes nothing.
  const second = await startOnce(dir.join('two'), cacheDir, false);
  assert.equal(second.loaded.codeCache, cache);
  assert.equal(second.loaded.codeCacheProblems, undefined);

  // A damaged cache: skipped with the reason, the start is ready all the same, and a good one replaces it.
  const bytes = readFileSync(cache);
  bytes.fill(0x55, bytes.length - 4096, bytes.length - 2048);
  writeFileSync(cache, bytes);
  const third = await startOnce(dir.join('three'), cacheDir, true);
  assert.equal(third.loaded.codeCache, 'none');
  assert.deepEqual(third.loaded.codeCacheProblems, [`${cache}: damaged (checksum mismatch)`]);
  assert.equal(third.saved.codeCacheWritten, cache);

  // Garbage in its place: the same.
  writeFileSync(cache, 'garbage');
  const fourth = await startOnce(dir.join('four'), cacheDir, true);
  assert.deepEqual(fourth.loaded.codeCacheProblems, [`${cache}: not a berth code cache`]);
  assert.equal(fourth.saved.codeCacheWritten, cache);
  assert.equal((await startOnce(dir.join('five'), cacheDir, false)).loaded.codeCache, cache);
});
