/**
 * kubelet.sock registrations recorded like plugins-directory ones (the
 * registry, through DevicePluginManagerOptions.legacyRecord): recorded before
 * Register answers, forgotten when the endpoint goes, when the grace period
 * ends, or when a plugins-dir registration takes the resource over; a failed
 * record fails the Register and disconnects the plugin. Real sockets and
 * gRPC; only the grace period's time is faked.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { type DevicePluginStub, startDevicePluginStub } from '../../testing/harness/index.js';
import { createTempDir, FakeClock, waitFor } from '../../testing/index.js';
import { createDevicePluginManager } from './device-manager.js';
import type { LegacyRecord } from './device-plugin-options.js';

const RESOURCE = 'example.com/legacy';
const GRACE_MS = 60_000;

async function setup(t: { after: (fn: () => unknown) => void }, failRecord = false) {
  const dir = createTempDir('berth-lr-');
  const clock = new FakeClock();
  const calls: string[] = [];
  const record: LegacyRecord = {
    registered: async (resource, endpoint) => {
      calls.push(`registered ${resource} ${endpoint}`);
      if (failRecord) throw new Error('the registry is read-only');
    },
    gone: async (resource, endpoint) => {
      calls.push(`gone ${resource} ${endpoint}`);
    },
  };
  const manager = createDevicePluginManager({
    databasePath: dir.join('devices.db'),
    socketDir: dir.join('device-plugins'),
    clock,
    gracePeriodMs: GRACE_MS,
    legacyRecord: record,
  });
  const stubs: DevicePluginStub[] = [];
  t.after(async () => {
    await manager.stop();
    for (const stub of stubs) await stub.stop();
    dir.remove();
  });
  await manager.start();
  const stub = async (name: string) => {
    const s = await startDevicePluginStub({
      socketPath: join(dir.path, 'device-plugins', name),
      devices: [{ id: 'd0' }],
    });
    stubs.push(s);
    return s;
  };
  const kubeletSock = manager.registrationSocketPath ?? assert.fail('kubelet.sock is served');
  return { dir, clock, calls, manager, stub, kubeletSock };
}

test('a kubelet.sock registration is recorded before Register answers; a gone endpoint is forgotten at once', async (t) => {
  const f = await setup(t);
  const plugin = await f.stub('a.sock');
  await plugin.register(f.kubeletSock, 'a.sock', RESOURCE);
  assert.deepEqual(f.calls, [`registered ${RESOURCE} ${plugin.socketPath}`]);

  // The plugin exits and removes its socket: the record goes with it, before the grace period.
  await plugin.stop();
  await waitFor('the record to go', () => f.calls.length === 2);
  assert.equal(f.calls[1], `gone ${RESOURCE} ${plugin.socketPath}`);
  assert.equal(f.manager.get(RESOURCE)?.state, 'disconnected', 'the devices wait out the grace period');
});

test('a plugin whose endpoint stays is forgotten when the grace period ends, not before', async (t) => {
  const f = await setup(t);
  const plugin = await f.stub('b.sock');
  await plugin.register(f.kubeletSock, 'b.sock', RESOURCE);
  await waitFor('the stream', () => plugin.openStreams === 1);
  // The stream ends but the socket file stays (the plugin may come back).
  plugin.endStreams();
  await waitFor('the disconnect', () => f.manager.get(RESOURCE)?.state === 'disconnected');
  assert.deepEqual(f.calls, [`registered ${RESOURCE} ${plugin.socketPath}`]);
  await f.clock.advance(GRACE_MS - 1);
  assert.equal(f.calls.length, 1, 'still recorded just before the grace period ends');
  await f.clock.advance(1);
  await waitFor('the record to go', () => f.calls.length === 2);
  assert.equal(f.calls[1], `gone ${RESOURCE} ${plugin.socketPath}`);
});

test('a plugin that ends its streams before it closes its socket is forgotten once the socket goes, not at the grace period', async (t) => {
  const f = await setup(t);
  const plugin = await f.stub('late.sock');
  await plugin.register(f.kubeletSock, 'late.sock', RESOURCE);
  await waitFor('the stream', () => plugin.openStreams === 1);
  // Shutting down: the streams end first, while the socket still answers.
  plugin.endStreams();
  await waitFor('the disconnect', () => f.manager.get(RESOURCE)?.state === 'disconnected');
  // The grace period's timer and the endpoint's re-check, 250 ms on.
  await waitFor('the re-check to be armed', () => f.clock.pendingTimers === 2);
  assert.equal(f.clock.nextTimerIn(), 250);
  assert.deepEqual(f.calls, [`registered ${RESOURCE} ${plugin.socketPath}`], 'it still answered');
  await plugin.stop(); // the socket goes
  await f.clock.advance(250);
  await waitFor('the record to go', () => f.calls.length === 2);
  assert.equal(f.calls[1], `gone ${RESOURCE} ${plugin.socketPath}`);
  assert.equal(f.manager.get(RESOURCE)?.state, 'disconnected', 'the devices still wait out the grace period');
});

test('re-registering on a new endpoint, or through the plugins directory, replaces the record', async (t) => {
  const f = await setup(t);
  const first = await f.stub('one.sock');
  const second = await f.stub('two.sock');
  await first.register(f.kubeletSock, 'one.sock', RESOURCE);
  await second.register(f.kubeletSock, 'two.sock', RESOURCE);
  await waitFor('the old record to go', () => f.calls.length === 3);
  assert.deepEqual(f.calls, [
    `registered ${RESOURCE} ${first.socketPath}`,
    `registered ${RESOURCE} ${second.socketPath}`,
    `gone ${RESOURCE} ${first.socketPath}`,
  ]);
  await f.manager.connect(RESOURCE, first.socketPath, {
    via: 'plugins-dir',
    registrationSocket: '/reg/x.sock',
  });
  await waitFor('the legacy record to go', () => f.calls.length === 4);
  assert.equal(f.calls[3], `gone ${RESOURCE} ${second.socketPath}`);
});

test('a record that cannot be made fails the Register call and disconnects the plugin', async (t) => {
  const f = await setup(t, true);
  const plugin = await f.stub('c.sock');
  await assert.rejects(plugin.register(f.kubeletSock, 'c.sock', RESOURCE), /the registry is read-only/);
  assert.equal(f.manager.get(RESOURCE)?.state, 'disconnected');
});
