/**
 * A plugin written with a different gRPC stack (Python grpcio) registers
 * through the whole plugin manager: discovery, GetInfo, the handler, and
 * NotifyRegistrationStatus(true) as the plugin itself reports it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { createPluginManager } from '../src/plugin-manager/index.js';
import { stopChild } from '../src/testing/harness/index.js';
import { createTempDir, RecordingHandler, waitFor } from '../src/testing/index.js';
import { requirePythonGrpc, spawnPythonPlugin } from './fixtures/python-plugin.js';

test('a Python grpcio plugin registers through createPluginManager', { timeout: 60_000 }, async (t) => {
  if (!requirePythonGrpc(t)) return;
  const dir = createTempDir();
  t.after(() => dir.remove());
  const manager = createPluginManager({ pluginsDir: dir.join('plugins'), liveness: false });
  t.after(() => manager.stop());
  const handler = new RecordingHandler();
  manager.addHandler('DevicePlugin', handler);
  await manager.start();

  const socketPath = join(dir.join('plugins'), 'py.sock');
  const plugin = spawnPythonPlugin({
    socketPath,
    name: 'py.example.com/gpu',
    type: 'DevicePlugin',
    versions: ['v1beta1', 'v1beta2'],
  });
  const { child } = plugin;
  t.after(() => stopChild(child, 'SIGTERM', 5_000));

  assert.deepEqual(await plugin.next('serving'), { event: 'serving' });
  const notified = await plugin.next('the registration status');
  assert.deepEqual(notified, { event: 'notified', registered: true, error: '' });
  await waitFor(
    'registered state',
    () => manager.sockets().find((s) => s.socketPath === socketPath)?.state === 'registered',
  );
  const status = manager.sockets().find((s) => s.socketPath === socketPath);
  assert.deepEqual(status?.plugin, { type: 'DevicePlugin', name: 'py.example.com/gpu' });
  assert.equal(status?.endpoint, socketPath, 'an empty endpoint means the registration socket');
  assert.deepEqual(status?.versions, ['v1beta1', 'v1beta2']);
  assert.deepEqual(handler.events, ['validate py.example.com/gpu', 'register py.example.com/gpu']);

  // The plugin removes its socket on SIGTERM: berth deregisters it.
  await stopChild(child, 'SIGTERM', 5_000);
  await waitFor('deregistration', () => !manager.actualState.pluginExists(socketPath));
  await handler.waitForEvents((e) => e.includes('deregister py.example.com/gpu'));
});
