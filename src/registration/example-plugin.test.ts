import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { createTempDir, newTestExamplePlugin } from '../testing/index.js';
import { dialRegistration } from './dial.js';
import { callExampleInfo } from './example-client.js';
import { createExamplePlugin } from './example-plugin.js';

test('newTestExamplePlugin reports its socket as the endpoint and serves both example APIs', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const socketPath = dir.join('plugin-0.sock');
  const plugin = newTestExamplePlugin('example-plugin-0', 'DevicePlugin', socketPath, 'v1beta1', 'v1beta2');
  t.after(() => plugin.stop());
  await plugin.start();
  assert.equal(plugin.socketPath, socketPath);
  assert.equal(plugin.endpoint, socketPath);

  const conn = await dialRegistration(socketPath, { timeoutMs: 10_000 });
  t.after(() => conn.close());
  assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), {
    type: 'DevicePlugin',
    name: 'example-plugin-0',
    endpoint: socketPath,
    supportedVersions: ['v1beta1', 'v1beta2'],
  });
  await callExampleInfo(socketPath, 'v1beta1', 5_000);
  await callExampleInfo(socketPath, 'v1beta2', 5_000);
});

test('createExamplePlugin defaults to an empty endpoint and can serve a single version', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const plugin = createExamplePlugin({
    socketPath: dir.join('p.sock'),
    name: 'only-v1beta1',
    type: 'CSIPlugin',
    versions: ['1.0.0'],
    services: ['v1beta1'],
  });
  t.after(() => plugin.stop());
  await plugin.start();
  const conn = await dialRegistration(plugin.socketPath, { timeoutMs: 10_000 });
  t.after(() => conn.close());
  assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), {
    type: 'CSIPlugin',
    name: 'only-v1beta1',
    endpoint: '',
    supportedVersions: ['1.0.0'],
  });
  await callExampleInfo(plugin.socketPath, 'v1beta1', 5_000);
  await assert.rejects(callExampleInfo(plugin.socketPath, 'v1beta2', 5_000), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_PLUGIN_CALL_FAILED'), String(err));
    assert.match(err.message, /UNIMPLEMENTED/);
    return true;
  });
});

test('example plugin behaviour knobs pass through (failNotify)', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const plugin = createExamplePlugin({
    socketPath: dir.join('p.sock'),
    name: 'n',
    type: 'T',
    versions: [],
    behaviour: { failNotify: true },
  });
  t.after(() => plugin.stop());
  await plugin.start();
  const conn = await dialRegistration(plugin.socketPath, { timeoutMs: 10_000 });
  t.after(() => conn.close());
  await assert.rejects(
    conn.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, { timeoutMs: 5_000 }),
    (err: unknown) => isBerthError(err, 'BERTH_NOTIFY_FAILED'),
  );
  assert.equal(plugin.statuses.length, 1);
});

test('an unsupported example service is refused by the example plugin too', () => {
  assert.throws(
    () =>
      createExamplePlugin({
        socketPath: '/tmp/x.sock',
        name: 'n',
        type: 'T',
        versions: [],
        services: ['v2' as 'v1beta1'],
      }),
    { message: "unsupported service: 'v2'" },
  );
});
