/**
 * Device plugins as a user meets them: `berth run` as a real process, Python
 * grpcio device plugins as real processes (one through the plugins directory,
 * one through the legacy kubelet.sock), `berth devices` and `berth events`.
 * The inventory changes live, an allocation survives a daemon restart, and a
 * killed device plugin leaves its devices unhealthy (and its allocation flagged).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  BERTH_CLI,
  runModule,
  spawnModule,
  stopChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';
import { type PythonDevicePlugin, spawnPythonDevicePlugin } from './fixtures/python-device-plugin.js';
import { requirePythonGrpc } from './fixtures/python-plugin.js';

const MAIN = BERTH_CLI;
const GPU = 'py.example.com/gpu';
const NIC = 'py.example.com/nic';

const longWait = { timeoutMs: 60_000, intervalMs: 25 };

/** Runs the real `berth` CLI to completion. */
const cli = (args: string[]) => runModule(MAIN, args);

interface ResourceJson {
  resource: string;
  state: string;
  via: string | null;
  healthy: number;
  unhealthy: number;
  devices: Array<{ id: string; health: string; allocatedTo: string | null }>;
  allocations: Array<{
    workload: string;
    deviceIds: string[];
    unhealthyDeviceIds: string[];
    envs: Record<string, string>;
  }>;
}

test('berth run with device plugins: live inventory, allocation across a restart, a killed plugin', {
  timeout: 300_000,
}, async (t) => {
  if (!requirePythonGrpc(t)) return;
  const dir = createTempDir('bde-');
  const children = new Set<ChildProcess>();
  const plugins: PythonDevicePlugin[] = [];
  t.after(async () => {
    for (const plugin of plugins) if (plugin.child.exitCode === null) plugin.child.kill('SIGKILL');
    await Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000)));
    dir.remove();
  });
  const dataDir = dir.path;
  const deviceDir = join(dataDir, 'device-plugins');
  const data = ['--data-dir', dataDir];
  const configPath = dir.join('berth.yaml');
  writeFileSync(configPath, 'handlerOptions:\n  DevicePlugin:\n    gracePeriod: 10m\n');

  const startDaemon = async () => {
    const daemon = trackChild(spawnModule(MAIN, ['run', ...data, '--config', configPath]), children);
    await waitForLine(daemon, 'the start-up line', (l) => l.startsWith('berth: watching'));
    await waitFor(
      'berth status to answer',
      async () => (await cli(['status', ...data])).code === 0,
      longWait,
    );
    return daemon;
  };
  const inventory = async (): Promise<Map<string, ResourceJson>> => {
    const out = await cli(['devices', '--json', ...data]);
    assert.equal(out.code, 0, out.stderr);
    const body = JSON.parse(out.stdout) as { resources: ResourceJson[] };
    return new Map(body.resources.map((r) => [r.resource, r]));
  };
  const waitInventory = (what: string, check: (r: Map<string, ResourceJson>) => boolean) =>
    waitFor(what, async () => check(await inventory()), longWait);
  const follow = () =>
    trackChild(spawnModule(MAIN, ['events', '--json', '--type', 'DevicePlugin', ...data]), children);

  let daemon = await startDaemon();
  let events = follow();
  await waitFor(
    'the event stream to be open',
    async () => {
      const status = JSON.parse((await cli(['status', '--json', ...data])).stdout) as {
        api?: { sseClients?: number };
      };
      return JSON.stringify(status).includes('"eventClients":1');
    },
    longWait,
  );

  // A GPU plugin through the plugins directory, a NIC plugin through the legacy kubelet.sock.
  const gpu = spawnPythonDevicePlugin({
    socketPath: join(deviceDir, 'gpu.sock'),
    registrationSocket: join(dataDir, 'plugins_registry', 'gpu-reg.sock'),
    resource: GPU,
    devices: [{ id: 'gpu0' }, { id: 'gpu1' }, { id: 'gpu2' }],
    preferred: true,
  });
  plugins.push(gpu);
  assert.deepEqual(await gpu.next('registration', (e) => e.event === 'notified'), {
    event: 'notified',
    registered: true,
    error: '',
  });
  const nic = spawnPythonDevicePlugin({
    socketPath: join(deviceDir, 'nic.sock'),
    kubeletSocket: join(deviceDir, 'kubelet.sock'),
    resource: NIC,
    devices: [{ id: 'nic0' }, { id: 'nic1' }],
    preStart: true,
  });
  plugins.push(nic);
  const registered = await nic.next(
    'legacy Register',
    (e) => e.event === 'registered' || e.event === 'register-failed',
  );
  assert.equal(registered.event, 'registered', registered.error);

  await waitInventory(
    '3 GPUs and 2 NICs healthy',
    (r) => r.get(GPU)?.healthy === 3 && r.get(NIC)?.healthy === 2,
  );
  const table = await cli(['devices', ...data]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^RESOURCE\s+STATE\s+HEALTHY\s+UNHEALTHY\s+ALLOCATIONS\s+ENDPOINT/);
  assert.match(table.stdout, new RegExp(`${GPU.replace('.', '\\.')}\\s+connected\\s+3\\s+0\\s+0`));
  assert.match(table.stdout, /gpu1\s+Healthy/);

  // The inventory changes live, and `berth events` shows it.
  gpu.setDevices([{ id: 'gpu0' }, { id: 'gpu1', health: 'Unhealthy' }, { id: 'gpu2' }]);
  const changedLine = await waitForLine(
    events,
    'devices-changed for gpu1',
    (l) => l.includes('"devices-changed"') && l.includes('"changed":["gpu1"]'),
  );
  const changed = JSON.parse(changedLine) as {
    resource: string;
    reason: string;
    healthy: number;
    unhealthy: number;
  };
  assert.deepEqual(
    [changed.resource, changed.reason, changed.healthy, changed.unhealthy],
    [GPU, 'snapshot', 2, 1],
  );
  await waitInventory(
    'gpu1 unhealthy',
    (r) => r.get(GPU)?.devices.find((d) => d.id === 'gpu1')?.health === 'Unhealthy',
  );

  // Allocate through the CLI: the plugin's preference (highest ids) among healthy free devices.
  const allocated = await cli([
    'devices',
    'allocate',
    GPU,
    '--workload',
    'job-1',
    '--count',
    '1',
    '--json',
    ...data,
  ]);
  assert.equal(allocated.code, 0, allocated.stderr);
  const allocation = (JSON.parse(allocated.stdout) as { allocation: ResourceJson['allocations'][number] })
    .allocation;
  assert.deepEqual(allocation.deviceIds, ['gpu2']);
  assert.deepEqual(allocation.envs, { PY_DEVICES: 'gpu2' });
  const nicAllocation = await cli([
    'devices',
    'allocate',
    NIC,
    '--workload',
    'job-1',
    '--device-ids',
    'nic1',
    ...data,
  ]);
  assert.equal(nicAllocation.code, 0, nicAllocation.stderr);
  assert.match(nicAllocation.stdout, /^allocated py\.example\.com\/nic nic1 to job-1$/m);
  assert.deepEqual(await nic.next('PreStartContainer', (e) => e.event === 'prestart'), {
    event: 'prestart',
    ids: ['nic1'],
  });
  const refused = await cli(['devices', 'allocate', GPU, '--workload', 'job-2', '--count', '5', ...data]);
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /requested number of devices unavailable for py\.example\.com\/gpu\. Requested: 5, Available: 1/,
  );

  // Restart the daemon: the allocation is restored; the plugins come back (the GPU by its socket, the NIC registers again).
  await stopChild(daemon.child, 'SIGTERM', 30_000);
  assert.equal(daemon.child.exitCode, 0, daemon.stderr.join('\n'));
  await stopChild(events.child, 'SIGKILL', 1000);
  daemon = await startDaemon();
  events = follow();
  nic.registerAgain();
  await waitInventory('both plugins back, allocations restored', (r) => {
    const g = r.get(GPU);
    return (
      g?.state === 'connected' &&
      g.healthy === 2 &&
      r.get(NIC)?.state === 'connected' &&
      g.allocations.length === 1
    );
  });
  const restored = (await inventory()).get(GPU);
  assert.deepEqual(
    restored?.allocations.map((a) => [a.workload, a.deviceIds, a.unhealthyDeviceIds]),
    [['job-1', ['gpu2'], []]],
  );
  assert.equal(restored?.devices.find((d) => d.id === 'gpu2')?.allocatedTo, 'job-1');

  // A killed device plugin: its devices become unhealthy and its allocation is flagged.
  gpu.child.kill('SIGKILL');
  const disconnected = await waitForLine(
    events,
    'devices-changed disconnected',
    (l) => l.includes('"disconnected"') && l.includes(GPU),
  );
  assert.match(disconnected, /"healthy":0,"unhealthy":3/);
  await waitInventory('the GPU resource disconnected, job-1 flagged', (r) => {
    const g = r.get(GPU);
    return (
      g?.state === 'disconnected' &&
      g.healthy === 0 &&
      g.unhealthy === 3 &&
      g.allocations[0]?.unhealthyDeviceIds.join() === 'gpu2'
    );
  });
  const warning = await cli(['devices', ...data]);
  assert.match(warning.stdout, /warning: job-1 holds unhealthy py\.example\.com\/gpu devices gpu2/);
  assert.equal((await inventory()).get(NIC)?.healthy, 2, 'the other plugin is not disturbed');

  // Release through the CLI.
  const released = await cli(['devices', 'release', GPU, 'job-1', ...data]);
  assert.equal(released.code, 0, released.stderr);
  assert.match(released.stdout, /^released py\.example\.com\/gpu gpu2 from job-1$/m);
  const again = await cli(['devices', 'release', GPU, 'job-1', ...data]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /workload job-1 holds no allocation of py\.example\.com\/gpu/);
  await nic.stop();
  await stopChild(daemon.child, 'SIGTERM', 30_000);
});
