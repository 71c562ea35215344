/**
 * The CSI and DRA handlers as a user meets them: `berth run` as a real child process, a
 * CSI driver (Python grpcio, behind its registration socket) as another, and
 * `berth csi drivers` (table and --json) showing the driver until it goes; the
 * same for a DRA driver and `berth dra drivers`.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { BERTH_CLI, runModule, spawnModule, stopChild } from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';
import { requirePythonGrpc, spawnPythonScript } from './fixtures/python-plugin.js';

const MAIN = BERTH_CLI;

/** Runs the real `berth` CLI to completion. */
const cli = (args: string[]) => runModule(MAIN, args);

test('berth run + a CSI driver process + berth csi drivers', { timeout: 180_000 }, async (t) => {
  if (!requirePythonGrpc(t)) return;
  const dir = createTempDir();
  t.after(() => dir.remove());
  const children = new Set<ChildProcess>();
  t.after(() => Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000))));

  const daemon = spawnModule(MAIN, ['run', '--data-dir', dir.path]);
  children.add(daemon);
  const lines: string[] = [];
  if (daemon.stdout) createInterface({ input: daemon.stdout }).on('line', (line) => lines.push(line));
  await waitFor('the start-up line', () => lines.find((l) => l.startsWith('berth: watching')), {
    timeoutMs: 60_000,
  });

  const empty = await cli(['csi', 'drivers', '--data-dir', dir.path]);
  assert.equal(empty.code, 0, empty.stderr);
  assert.equal(empty.stdout.trim(), 'no CSI drivers registered');

  const driver = spawnPythonScript('python-driver.py', [
    '--kind',
    'csi',
    '--socket',
    dir.join('plugins_registry', 'py.csi.example.com-reg.sock'),
    '--endpoint',
    dir.join('csi.sock'),
    '--name',
    'py.csi.example.com',
  ]);
  children.add(driver.child);
  const json = await waitFor(
    'the driver in berth csi drivers --json',
    async () => {
      const out = await cli(['csi', 'drivers', '--json', '--data-dir', dir.path]);
      const body = JSON.parse(out.stdout) as { drivers: Array<{ name: string; nodeId: string }> };
      return body.drivers.length === 1 ? body : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  assert.equal(json.drivers[0]?.name, 'py.csi.example.com');
  assert.equal(json.drivers[0]?.nodeId, 'py-node-1');

  const table = await cli(['csi', 'drivers', '--data-dir', dir.path]);
  assert.equal(table.code, 0, table.stderr);
  const [header, row] = table.stdout.trim().split('\n');
  assert.match(
    header ?? '',
    /^DRIVER\s+NODE ID\s+MAX VOLUMES\s+TOPOLOGY\s+VENDOR VERSION\s+CAPABILITIES\s+READY$/,
  );
  assert.match(
    row ?? '',
    /^py\.csi\.example\.com\s+py-node-1\s+2147483647\s+topology\.example\.com\/node=py-node,topology\.example\.com\/zone=py-zone\s+9\.8\.7\s+STAGE_UNSTAGE_VOLUME,EXPAND_VOLUME\s+yes$/,
  );

  // The driver stops (removing its registration socket): its entry goes.
  await stopChild(driver.child, 'SIGTERM');
  await waitFor(
    'the driver to leave berth csi drivers',
    async () =>
      (await cli(['csi', 'drivers', '--data-dir', dir.path])).stdout.trim() === 'no CSI drivers registered',
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  await stopChild(daemon, 'SIGTERM');
});

test('berth run + a Python DRA driver process + berth dra drivers', { timeout: 180_000 }, async (t) => {
  if (!requirePythonGrpc(t)) return;
  const dir = createTempDir();
  t.after(() => dir.remove());
  const children = new Set<ChildProcess>();
  t.after(() => Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000))));

  const daemon = spawnModule(MAIN, ['run', '--data-dir', dir.path]);
  children.add(daemon);
  const lines: string[] = [];
  if (daemon.stdout) createInterface({ input: daemon.stdout }).on('line', (line) => lines.push(line));
  await waitFor('the start-up line', () => lines.find((l) => l.startsWith('berth: watching')), {
    timeoutMs: 60_000,
  });

  const driver = spawnPythonScript('python-driver.py', [
    '--kind',
    'dra',
    '--socket',
    dir.join('plugins_registry', 'gpu.example.com-a.sock'),
    '--endpoint',
    dir.join('dra-a.sock'),
    '--name',
    'gpu.example.com',
    '--instance',
    'a',
  ]);
  children.add(driver.child);
  await waitFor(
    'the DRA driver usable in berth dra drivers --json',
    async () => {
      const out = await cli(['dra', 'drivers', '--json', '--data-dir', dir.path]);
      const body = JSON.parse(out.stdout) as { drivers: Array<{ usable: boolean }> };
      return body.drivers[0]?.usable === true;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  const table = await cli(['dra', 'drivers', '--data-dir', dir.path]);
  assert.equal(table.code, 0, table.stderr);
  const [header, row] = table.stdout.trim().split('\n');
  assert.match(header ?? '', /^DRIVER\s+USABLE\s+INSTANCE\s+SERVICE\s+STATE$/);
  assert.equal(
    row?.replace(/\s+/g, ' ').trim(),
    `gpu.example.com yes *${dir.join('dra-a.sock')} v1.DRAPlugin ready`,
  );
  await stopChild(driver.child, 'SIGTERM');
  await waitFor(
    'the driver to leave berth dra drivers',
    async () =>
      (await cli(['dra', 'drivers', '--data-dir', dir.path])).stdout.trim() === 'no DRA drivers registered',
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  await stopChild(daemon, 'SIGTERM');
});
