/**
 * Observe mode against grpc-go plugins, the stack most production device
 * plugins and CSI drivers run on: a registrar and an observer (two real
 * `berth run` processes) on one plugins directory, a Go device plugin and a
 * Go CSI driver registering through it. The Go plugins must be told exactly
 * once, by the registrar; the observer shows both sockets observed with the
 * kubelet's verdict, the device inventory from its own read-only ListAndWatch
 * (a health flip included) and the CSI driver's node info, all flagged
 * observed, and it calls nothing on the CSI driver but identity and node
 * info. A Go plugin that stops is then gone from the observer too.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  BERTH_CLI,
  getOverUnixSocket,
  spawnModule,
  stopChild,
  type TrackedChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';
import { goPeers, requireGo, spawnGoDevicePlugin } from './fixtures/go-peers.js';

const MAIN = BERTH_CLI;
const longWait = { timeoutMs: 60_000, intervalMs: 50 };

// biome-ignore lint/suspicious/noExplicitAny: the test reads arbitrary JSON answers
async function getJson(socketPath: string, path: string): Promise<any> {
  return JSON.parse((await getOverUnixSocket(socketPath, path)).text);
}

/** The methods the Go CSI driver was called with (its JSON-line events). */
function csiCalls(driver: TrackedChild): string[] {
  return driver.stdout
    .map((line) => JSON.parse(line) as { event: string; method?: string })
    .filter((e) => e.event === 'call')
    .map((e) => e.method as string);
}

function csiNotifies(driver: TrackedChild): boolean[] {
  return driver.stdout
    .map((line) => JSON.parse(line) as { event: string; registered?: boolean })
    .filter((e) => e.event === 'notified')
    .map((e) => e.registered === true);
}

test('an observer beside a registrar with grpc-go plugins: one Notify each, inventory and node info observed', {
  timeout: 240_000,
}, async (t) => {
  if (!requireGo(t)) return;
  const peers = await goPeers();
  const dir = createTempDir('obs-go-');
  const children = new Set<ChildProcess>();
  t.after(async () => {
    await Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000)));
    dir.remove();
  });
  const pluginsDir = dir.join('plugins');
  mkdirSync(pluginsDir);
  const config = dir.join('berth.yaml');
  writeFileSync(config, 'backoff: { initial: 100ms, max: 1s }\nrescanInterval: 1s\n');

  const registrarDir = dir.join('registrar');
  const registrar = trackChild(
    spawnModule(MAIN, ['run', '--data-dir', registrarDir, '--plugins-dir', pluginsDir, '--config', config]),
    children,
  );
  await waitForLine(registrar, 'the registrar started', (l) => l.startsWith('berth: watching'));
  const observerDir = dir.join('observer');
  const observer = trackChild(
    spawnModule(MAIN, [
      'run',
      '--observe',
      ...['--data-dir', observerDir, '--plugins-dir', pluginsDir, '--config', config],
    ]),
    children,
  );
  await waitForLine(observer, 'the observer started', (l) => l.startsWith('berth: observing'));
  const registrarApi = join(registrarDir, 'berth.sock');
  const observerApi = join(observerDir, 'berth.sock');

  // The Go plugins, each registering through the shared directory.
  const resource = 'go.example.com/gpu';
  const devicePlugin = await spawnGoDevicePlugin({
    socketPath: dir.join('gpu.sock'),
    resource,
    registrationSocket: join(pluginsDir, 'gpu-reg.sock'),
    devices: [{ id: 'g0' }, { id: 'g1' }],
  });
  t.after(() => devicePlugin.stop());
  const csiName = 'observed.go.csi.example.com';
  const csiRegistration = join(pluginsDir, 'csi-reg.sock');
  const csiDriver = trackChild(
    spawn(
      peers.csiDriver,
      [
        ...['--socket', csiRegistration, '--endpoint', dir.join('csi.sock')],
        ...['--name', csiName, '--state-dir', dir.join('csi-state'), '--stage'],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ),
    children,
  );

  const socketState = async (api: string, path: string): Promise<string | undefined> =>
    ((await getJson(api, '/v1/sockets')).sockets as Array<{ socketPath: string; state: string }>).find(
      (row) => row.socketPath === path,
    )?.state;
  const deviceSocket = join(pluginsDir, 'gpu-reg.sock');
  await waitFor(
    'the registrar registered both Go plugins',
    async () =>
      (await socketState(registrarApi, deviceSocket)) === 'registered' &&
      (await socketState(registrarApi, csiRegistration)) === 'registered',
    longWait,
  );
  const observed = await waitFor(
    'the observer observed both Go plugins',
    async () => {
      const rows = (await getJson(observerApi, '/v1/sockets')).sockets as Array<{
        socketPath: string;
        state: string;
        plugin: { type: string; name: string } | null;
        verdict: { accepted: boolean; error: string | null } | null;
      }>;
      const mine = rows.filter((r) => r.socketPath === deviceSocket || r.socketPath === csiRegistration);
      return mine.length === 2 && mine.every((r) => r.state === 'observed') ? mine : undefined;
    },
    longWait,
  );
  assert.deepEqual(observed.map((r) => [r.plugin?.type, r.plugin?.name, r.verdict]).sort(), [
    ['CSIPlugin', csiName, { accepted: true, error: null }],
    ['DevicePlugin', resource, { accepted: true, error: null }],
  ]);

  // The observer's own ListAndWatch: the inventory, flagged observed, and a health flip seen live.
  const observedResource = async () =>
    (
      (await getJson(observerApi, '/v1/devices')).resources as Array<{
        resource: string;
        observed?: boolean;
        devices: Array<{ id: string; health: string }>;
      }>
    ).find((r) => r.resource === resource);
  const inventory = await waitFor('the observer lists the Go inventory', observedResource, longWait);
  assert.equal(inventory.observed, true);
  assert.deepEqual(inventory.devices.map((d) => d.id).sort(), ['g0', 'g1']);
  devicePlugin.setDevices([{ id: 'g0' }, { id: 'g1', health: 'Unhealthy' }]);
  await waitFor(
    'the observer sees g1 unhealthy',
    async () => (await observedResource())?.devices.find((d) => d.id === 'g1')?.health === 'Unhealthy',
    longWait,
  );

  // The CSI driver's node info, observed.
  const drivers = (await getJson(observerApi, '/v1/csi/drivers')).drivers as Array<{
    name: string;
    nodeId: string;
    observed?: boolean;
  }>;
  const driver = drivers.find((d) => d.name === csiName);
  assert.equal(driver?.nodeId, 'go-volumes-node');
  assert.equal(driver?.observed, true);

  // Exactly one Notify(true) each, from the registrar; the observer told nobody anything.
  const deviceNotifies = devicePlugin.seen().filter((e) => e.event === 'notified');
  assert.deepEqual(
    deviceNotifies.map((e) => e.registered),
    [true],
  );
  assert.deepEqual(csiNotifies(csiDriver), [true]);
  // Only identity and node info on the CSI driver (the registrar's and the observer's), nothing that changes it.
  const readOnly = new Set(['GetPluginInfo', 'Probe', 'NodeGetCapabilities', 'NodeGetInfo']);
  assert.deepEqual(
    csiCalls(csiDriver).filter((m) => !readOnly.has(m)),
    [],
  );
  assert.ok(csiCalls(csiDriver).filter((m) => m === 'NodeGetInfo').length >= 2, 'both asked NodeGetInfo');

  // A Go plugin that stops (its sockets removed) is gone from the observer too.
  await devicePlugin.stop();
  await waitFor(
    'the device plugin left the observer',
    async () => (await socketState(observerApi, deviceSocket)) === undefined,
    longWait,
  );
  assert.deepEqual(csiNotifies(csiDriver), [true]);
  assert.equal(registrar.child.exitCode, null, 'the registrar still runs');
  assert.equal(observer.child.exitCode, null, 'the observer still runs');
});
