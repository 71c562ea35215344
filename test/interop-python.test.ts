/**
 * Interoperability of berth's registration client with a plugin on another
 * gRPC stack: Debian's C-core grpcio (python3-grpcio), whose messages are
 * encoded by google.protobuf, not by berth's generated code.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { dialRegistration } from '../src/registration/index.js';
import { createTempDir } from '../src/testing/index.js';
import { requirePythonGrpc, spawnPythonPlugin } from './fixtures/python-plugin.js';

test('a Python grpcio plugin registers through dialRegistration', { timeout: 60_000 }, async (t) => {
  if (!requirePythonGrpc(t)) return;
  const dir = createTempDir();
  t.after(() => dir.remove());
  const socketPath = dir.join('py-plugin.sock');
  const plugin = spawnPythonPlugin({
    socketPath,
    name: 'py.example.com/plugin',
    type: 'DevicePlugin',
    endpoint: '/run/py/service.sock',
    versions: ['v1beta1', 'v1beta2'],
  });
  const exited = new Promise<number | null>((resolve) => plugin.child.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (plugin.child.exitCode === null && plugin.child.signalCode === null) plugin.child.kill('SIGKILL');
  });

  assert.deepEqual(await plugin.next('serving'), { event: 'serving' });
  const conn = await dialRegistration(socketPath, { timeoutMs: 10_000 });
  try {
    assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), {
      type: 'DevicePlugin',
      name: 'py.example.com/plugin',
      endpoint: '/run/py/service.sock',
      supportedVersions: ['v1beta1', 'v1beta2'],
    });
    await conn.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, { timeoutMs: 5_000 });
    assert.deepEqual(await plugin.next('notified(true)'), { event: 'notified', registered: true, error: '' });
    const refusal = 'RegisterPlugin error -- no handler registered for plugin type: X';
    await conn.notifyRegistrationStatus({ pluginRegistered: false, error: refusal }, { timeoutMs: 5_000 });
    assert.deepEqual(await plugin.next('notified(false)'), {
      event: 'notified',
      registered: false,
      error: refusal,
    });
  } finally {
    conn.close();
  }

  plugin.child.kill('SIGTERM');
  assert.equal(await exited, 0, `python plugin exit code (stderr: ${plugin.stderr()})`);
  assert.equal(existsSync(socketPath), false, 'the plugin removes its socket on SIGTERM');
});
