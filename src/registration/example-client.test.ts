import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { createStaleSocket, createTempDir, newTestExamplePlugin } from '../testing/index.js';
import { callExampleInfo } from './example-client.js';

test('callExampleInfo calls both versions on a serving plugin', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const plugin = newTestExamplePlugin('p', 'T', dir.join('p.sock'), 'v1beta1', 'v1beta2');
  t.after(() => plugin.stop());
  await plugin.start();
  await callExampleInfo(plugin.endpoint, 'v1beta1', 5_000);
  await callExampleInfo(`unix:${plugin.endpoint}`, 'v1beta2', 5_000);
});

test('callExampleInfo on a socket with no listener fails with BERTH_PLUGIN_CALL_FAILED', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('stale.sock');
  await createStaleSocket(path);
  await assert.rejects(callExampleInfo(path, 'v1beta1', 5_000), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_PLUGIN_CALL_FAILED'), String(err));
    assert.match(err.message, /UNAVAILABLE/);
    return true;
  });
});

test('callExampleInfo rejects bad arguments with clear errors', async () => {
  await assert.rejects(callExampleInfo('', 'v1beta1', 1000), /endpoint is empty/);
  await assert.rejects(callExampleInfo('/tmp/x.sock', 'v9' as 'v1beta1', 1000), {
    message: "unsupported service: 'v9'",
  });
  await assert.rejects(callExampleInfo('/tmp/x.sock', 'v1beta1', -1), /timeoutMs/);
});
