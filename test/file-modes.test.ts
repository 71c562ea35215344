/**
 * berth's files are private whatever the umask: `berth run` started under
 * umask 000 (through `sh -c 'umask 000; exec node ...'`) creates its data
 * directory and objects/ 0700, and state.db, its WAL files, the API token and
 * the API socket 0600; an existing data directory that others can write is
 * tightened to 0700 with a warning. A real child process on a real file system.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BERTH_CLI, stopChild } from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

const MAIN = fileURLToPath(BERTH_CLI);

function runUnderUmask000(args: string[]): { child: ChildProcess; output: () => string } {
  const node = [process.execPath, ...(MAIN.endsWith('.ts') ? ['--import', 'tsx'] : []), MAIN, ...args];
  const quoted = node.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('sh', ['-c', `umask 000; exec ${quoted}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

test('under umask 000 every file berth creates is private', async (t) => {
  await using dir = createTempDir('berth-umask-');
  const dataDir = join(dir.path, 'data');
  const run = runUnderUmask000(['run', '--data-dir', dataDir, '--listen', '127.0.0.1:0']);
  t.after(() => stopChild(run.child));
  await waitFor(
    'berth to be ready',
    () => {
      if (run.child.exitCode !== null) throw new Error(`berth exited: ${run.output()}`);
      return run.output().includes('berth: watching');
    },
    { timeoutMs: 60_000, intervalMs: 20 },
  );
  const objects = join(dataDir, 'objects');
  await waitFor('objects/ to be created', () => existsSync(objects));

  assert.equal(mode(dataDir), '700');
  assert.equal(mode(objects), '700');
  assert.equal(mode(join(dataDir, 'state.db')), '600');
  assert.equal(mode(join(dataDir, 'api-token')), '600');
  assert.equal(mode(join(dataDir, 'berth.sock')), '600');
  for (const name of readdirSync(dataDir).filter((n) => n.startsWith('state.db-'))) {
    assert.equal(mode(join(dataDir, name)), '600', name);
  }
  await stopChild(run.child);
});

test('an existing data directory writable by others is tightened to 0700 with a warning', async (t) => {
  await using dir = createTempDir('berth-umask-');
  const dataDir = join(dir.path, 'data');
  mkdirSync(dataDir);
  chmodSync(dataDir, 0o777);
  const run = runUnderUmask000(['run', '--data-dir', dataDir]);
  t.after(() => stopChild(run.child));
  await waitFor(
    'berth to be ready',
    () => {
      if (run.child.exitCode !== null) throw new Error(`berth exited: ${run.output()}`);
      return run.output().includes('berth: watching');
    },
    { timeoutMs: 60_000, intervalMs: 20 },
  );
  assert.equal(mode(dataDir), '700');
  assert.match(run.output(), /--data-dir was writable by group or others; tightened it to 0700/);
  await stopChild(run.child);
});
