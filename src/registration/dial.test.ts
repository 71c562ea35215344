import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { connectedServer } from '../testing/harness/index.js';
import { createStaleSocket, createTempDir, waitFor } from '../testing/index.js';
import { dialRegistration } from './dial.js';
import { createRegistrationServer } from './registration-server.js';

const info = {
  type: 'DevicePlugin',
  name: 'example.com/gpu',
  endpoint: '/run/example/gpu.sock',
  supportedVersions: ['v1beta1', 'v1beta2'],
};

test('GetInfo and NotifyRegistrationStatus round-trip over a real socket', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const server = createRegistrationServer({ socketPath: dir.join('plugin.sock'), info });
  t.after(() => server.stop());
  await server.start();
  assert.ok(lstatSync(server.socketPath).isSocket());

  const conn = await dialRegistration(server.socketPath, { timeoutMs: 10_000 });
  t.after(() => conn.close());
  assert.equal(conn.socketPath, server.socketPath);
  assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), info);
  assert.equal(server.getInfoCalls, 1);

  await conn.notifyRegistrationStatus(
    { pluginRegistered: false, error: 'validation failed' },
    { timeoutMs: 5_000 },
  );
  await conn.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, { timeoutMs: 5_000 });
  assert.deepEqual(await server.nextStatus(), { pluginRegistered: false, error: 'validation failed' });
  assert.deepEqual(await server.nextStatus(), { pluginRegistered: true, error: '' });
  assert.deepEqual(server.statuses, [
    { pluginRegistered: false, error: 'validation failed' },
    { pluginRegistered: true, error: '' },
  ]);
});

test('an info function is asked on every GetInfo', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  let generation = 0;
  const server = createRegistrationServer({
    socketPath: dir.join('p.sock'),
    info: async () => ({ type: 'T', name: `n${++generation}`, endpoint: '', supportedVersions: [] }),
  });
  t.after(() => server.stop());
  await server.start();
  const conn = await dialRegistration(server.socketPath, { timeoutMs: 10_000 });
  t.after(() => conn.close());
  assert.equal((await conn.getInfo({ timeoutMs: 5_000 })).name, 'n1');
  const second = await conn.getInfo({ timeoutMs: 5_000 });
  assert.deepEqual(second, { type: 'T', name: 'n2', endpoint: '', supportedVersions: [] });
});

test('dialing a stale socket (file, no listener) fails fast with BERTH_DIAL_FAILED', {
  timeout: 20_000,
}, async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('stale.sock');
  await createStaleSocket(path);
  // Without fail-fast this would wait for the whole minute and the test would time out.
  await assert.rejects(dialRegistration(path, { timeoutMs: 60_000 }), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_DIAL_FAILED'), String(err));
    assert.match(err.message, /ECONNREFUSED/);
    assert.ok(err.message.includes(path));
    return true;
  });
});

test('dialing a missing path fails fast with BERTH_DIAL_FAILED naming ENOENT', {
  timeout: 20_000,
}, async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  await assert.rejects(dialRegistration(dir.join('missing.sock'), { timeoutMs: 60_000 }), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_DIAL_FAILED'), String(err));
    assert.match(err.message, /ENOENT/);
    return true;
  });
});

test('dialing a regular file fails with BERTH_DIAL_FAILED', { timeout: 20_000 }, async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('not-a-socket');
  await writeFile(path, 'x');
  await assert.rejects(dialRegistration(path, { timeoutMs: 60_000 }), (err: unknown) =>
    isBerthError(err, 'BERTH_DIAL_FAILED'),
  );
});

test('an empty socket path and a bad timeout are rejected with clear errors', async () => {
  await assert.rejects(dialRegistration('', { timeoutMs: 1000 }), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_SOCKET_PATH_EMPTY'));
    assert.equal(err.message, 'socket path is empty');
    return true;
  });
  await assert.rejects(dialRegistration('/tmp/x.sock', { timeoutMs: 0 }), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_INVALID_ARGUMENT'));
    assert.match(err.message, /timeoutMs/);
    return true;
  });
});

test('an aborted dial rejects with BERTH_ABORTED', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const controller = new AbortController();
  controller.abort(new Error('shutting down'));
  await assert.rejects(
    dialRegistration(dir.join('any.sock'), { timeoutMs: 10_000, signal: controller.signal }),
    (err: unknown) => isBerthError(err, 'BERTH_ABORTED'),
  );
});

test('GetInfo past its deadline on a hanging plugin fails with BERTH_GET_INFO_FAILED', async (t) => {
  const { server, conn } = await connectedServer(t, { info, behaviour: { hangGetInfo: true } });
  await assert.rejects(conn.getInfo({ timeoutMs: 200 }), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_GET_INFO_FAILED'), String(err));
    assert.match(err.message, /DEADLINE_EXCEEDED/);
    assert.ok(err.cause instanceof Error);
    return true;
  });
  assert.equal(server.getInfoCalls, 1);
});

test('GetInfo slower than its deadline fails, and succeeds once the plugin answers in time', async (t) => {
  const { server, conn } = await connectedServer(t, { info, behaviour: { getInfoDelayMs: 5_000 } });
  await assert.rejects(conn.getInfo({ timeoutMs: 100 }), (err: unknown) =>
    isBerthError(err, 'BERTH_GET_INFO_FAILED'),
  );
  server.behaviour.getInfoDelayMs = 0;
  assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), info);
});

test('GetInfo aborted by its signal rejects with BERTH_ABORTED', async (t) => {
  const { server, conn } = await connectedServer(t, { info, behaviour: { hangGetInfo: true } });
  const controller = new AbortController();
  const pending = conn.getInfo({ timeoutMs: 60_000, signal: controller.signal });
  await waitUntil(() => server.getInfoCalls === 1);
  controller.abort();
  await assert.rejects(pending, (err: unknown) => isBerthError(err, 'BERTH_ABORTED'));
});

test('a failing Notify surfaces as BERTH_NOTIFY_FAILED with the gRPC text; the plugin still saw it', async (t) => {
  const { server, conn } = await connectedServer(t, { info, behaviour: { failNotify: true } });
  await assert.rejects(
    conn.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, { timeoutMs: 5_000 }),
    (err: unknown) => {
      assert.ok(isBerthError(err, 'BERTH_NOTIFY_FAILED'), String(err));
      assert.match(err.message, /INTERNAL/);
      assert.match(err.message, /failNotify/);
      return true;
    },
  );
  assert.deepEqual(await server.nextStatus(), { pluginRegistered: true, error: '' });
});

test('calls after close() fail with the call error code, and close is safe twice', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const server = createRegistrationServer({ socketPath: dir.join('c.sock'), info });
  t.after(() => server.stop());
  await server.start();
  const conn = await dialRegistration(server.socketPath, { timeoutMs: 10_000 });
  conn.close();
  conn.close();
  await assert.rejects(conn.getInfo({ timeoutMs: 1_000 }), (err: unknown) =>
    isBerthError(err, 'BERTH_GET_INFO_FAILED'),
  );
  assert.ok(existsSync(server.socketPath));
});

async function waitUntil(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('a listener that answers the fail-fast probe and then dies does not make the dial wait its deadline', {
  timeout: 60_000,
}, async (t) => {
  // Deterministic form of a race seen under load: the channel's connect is
  // closed, the probe connects (so "something is listening"), then the
  // listener dies leaving its socket file. grpc-js then sits in
  // TRANSIENT_FAILURE with no further state change; without re-probing, the
  // dial waited its whole deadline (here 10 minutes) and this test timed out.
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('flaky.sock');
  const script = [
    "const net = require('node:net');",
    'let accepted = 0;',
    'const server = net.createServer((conn) => {',
    '  conn.destroy();',
    // The gRPC connection and the probe: then die without unlinking the socket.
    "  if (++accepted === 2) process.kill(process.pid, 'SIGKILL');",
    '});',
    "server.listen(process.argv[1], () => console.log('ready'));",
  ].join('\n');
  const child = spawn(process.execPath, ['-e', script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  await new Promise((resolve) => child.stdout?.once('data', resolve));

  await assert.rejects(dialRegistration(path, { timeoutMs: 600_000 }), (err) => {
    assert.ok(isBerthError(err, 'BERTH_DIAL_FAILED'), String(err));
    assert.match(err.message, /ECONNREFUSED/);
    return true;
  });
});

test('a dial aborted while it waits to retry a listener that closed early rejects with BERTH_ABORTED at once', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('closes.sock');
  let accepted = 0;
  // Accepts and closes: the dial takes it for a transient failure and waits before the next try.
  const server = createServer((conn) => {
    accepted += 1;
    conn.destroy();
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const controller = new AbortController();
  const dialling = dialRegistration(path, { timeoutMs: 600_000, signal: controller.signal });
  await waitFor('the first connection to be closed', () => accepted >= 1);
  controller.abort(new Error('shutting down'));
  await assert.rejects(dialling, (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_ABORTED'), String(err));
    assert.match(err.message, new RegExp(`dial ${path}`));
    return true;
  });
});
