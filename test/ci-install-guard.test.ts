/**
 * scripts/ci-install-guard.mjs, which decides whether .ci/run may run
 * `npm ci`: skip when node_modules matches the lockfile, refuse when it does
 * not and a berth daemon runs from the checkout (npm ci would delete its
 * modules), install otherwise. Run on a scratch checkout with a real process
 * standing in for the daemon (found through /proc, as the script finds it).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runModule, stopChild, trackChild, waitForLine } from '../src/testing/harness/index.js';
import { createTempDir } from '../src/testing/index.js';

const repoRoot = new URL(import.meta.url.includes('/dist/') ? '../../' : '../', import.meta.url);
const GUARD = fileURLToPath(new URL('scripts/ci-install-guard.mjs', repoRoot));

const lock = {
  name: 'scratch',
  lockfileVersion: 3,
  packages: {
    '': { name: 'scratch' },
    'node_modules/left-pad': { version: '1.3.0', integrity: 'sha512-left' },
    'node_modules/@x/darwin-only': { version: '1.0.0', integrity: 'sha512-darwin', optional: true },
  },
};

function writeJson(path: string, value: unknown) {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, JSON.stringify(value));
}

test('ci-install-guard: install, skip when current, refuse under a running daemon', async (t) => {
  await using dir = createTempDir('berth-guard-');
  const checkout = dir.join('checkout');
  mkdirSync(join(checkout, 'scripts'), { recursive: true });
  copyFileSync(GUARD, join(checkout, 'scripts', 'ci-install-guard.mjs'));
  writeJson(join(checkout, 'package-lock.json'), lock);
  const guard = () => runModule(pathToFileURL(join(checkout, 'scripts', 'ci-install-guard.mjs')));

  await t.test('no node_modules: install', async () => {
    const run = await guard();
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /no node_modules\/\.package-lock\.json.*running npm ci/);
  });

  // What npm ci leaves: its record of the tree and the packages (the optional platform one skipped).
  writeJson(join(checkout, 'node_modules', '.package-lock.json'), {
    ...lock,
    packages: { 'node_modules/left-pad': lock.packages['node_modules/left-pad'] },
  });
  writeJson(join(checkout, 'node_modules', 'left-pad', 'package.json'), {
    name: 'left-pad',
    version: '1.3.0',
  });

  await t.test('node_modules matches the lockfile: skip', async () => {
    const run = await guard();
    assert.equal(run.code, 10, run.stderr);
    assert.match(run.stdout, /skipping npm ci/);
  });

  // The package on disk drifts from the lockfile (an edited or half-finished install).
  writeJson(join(checkout, 'node_modules', 'left-pad', 'package.json'), {
    name: 'left-pad',
    version: '1.2.0',
  });

  await t.test('stale node_modules, no daemon: install', async () => {
    const run = await guard();
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /left-pad\/package\.json says 1\.2\.0, expected 1\.3\.0; running npm ci/);
  });

  await t.test('stale node_modules under a daemon from this checkout: refuse, naming it', async () => {
    // A stand-in for `node dist/src/cli/main.cjs run` started in the checkout (npm start).
    const main = join(checkout, 'dist', 'src', 'cli', 'main.cjs');
    mkdirSync(join(main, '..'), { recursive: true });
    writeFileSync(main, "console.log('berth: watching'); setInterval(() => {}, 60_000);\n");
    const children = new Set<ChildProcess>();
    const daemon = trackChild(
      spawn(process.execPath, ['dist/src/cli/main.cjs', 'run'], { cwd: checkout, stdio: 'pipe' }),
      children,
    );
    try {
      await waitForLine(daemon, 'the stand-in daemon started', (l) => l.startsWith('berth: watching'));
      const run = await guard();
      assert.equal(run.code, 20, run.stdout);
      assert.match(
        run.stderr,
        new RegExp(`berth daemon running from this checkout: pid ${daemon.child.pid} `),
      );
      assert.match(run.stderr, /Stop the daemon/);
    } finally {
      for (const child of children) await stopChild(child);
    }
  });
});
