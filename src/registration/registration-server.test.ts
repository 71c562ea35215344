import assert from 'node:assert/strict';
import { existsSync, lstatSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { connectedServer } from '../testing/harness/index.js';
import { createStaleSocket, createTempDir } from '../testing/index.js';
import { dialRegistration } from './dial.js';
import { createRegistrationServer } from './registration-server.js';

const info = { type: 'T', name: 'n', endpoint: '', supportedVersions: ['v1'] };

test('an unknown example service is refused with the upstream text', () => {
  assert.throws(
    () => createRegistrationServer({ socketPath: '/tmp/x.sock', info, services: ['v1beta3' as 'v1beta1'] }),
    (err: unknown) => {
      assert.ok(isBerthError(err, 'BERTH_INVALID_ARGUMENT'));
      assert.equal(err.message, "unsupported service: 'v1beta3'");
      return true;
    },
  );
});

test('an empty or over-long socket path is refused', () => {
  assert.throws(() => createRegistrationServer({ socketPath: '', info }), /socket path is empty/);
  assert.throws(
    () => createRegistrationServer({ socketPath: `/tmp/${'x'.repeat(120)}.sock`, info }),
    (err: unknown) => isBerthError(err, 'BERTH_INVALID_ARGUMENT') && /too long/.test(err.message),
  );
});

test('stop() is idempotent, removes the socket file and rejects waiting nextStatus calls', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const server = createRegistrationServer({ socketPath: dir.join('sub', 'dir', 'p.sock'), info });
  await server.start();
  assert.ok(lstatSync(server.socketPath).isSocket(), 'start creates the socket (and its directories)');
  assert.equal(server.listening, true);
  const waiting = assert.rejects(server.nextStatus(), (err: unknown) => isBerthError(err, 'BERTH_SHUT_DOWN'));
  await Promise.all([server.stop(), server.stop()]);
  await server.stop();
  assert.equal(existsSync(server.socketPath), false);
  assert.equal(server.listening, false);
  await waiting;
});

test('stop() before start() and stop() after the file was removed by someone else both succeed', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const never = createRegistrationServer({ socketPath: dir.join('never.sock'), info });
  await never.stop();
  const server = createRegistrationServer({ socketPath: dir.join('p.sock'), info });
  await server.start();
  dir.remove();
  await server.stop();
  assert.equal(existsSync(server.socketPath), false);
});

test('stop() cancels a hanging GetInfo instead of waiting for it', { timeout: 20_000 }, async (t) => {
  const { server, conn } = await connectedServer(t, { info, behaviour: { hangGetInfo: true } });
  const pending = assert.rejects(conn.getInfo({ timeoutMs: 60_000 }), (err: unknown) =>
    isBerthError(err, 'BERTH_GET_INFO_FAILED'),
  );
  while (server.getInfoCalls === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  await server.stop();
  await pending;
});

test('start() replaces a leftover (stale) socket file but refuses to delete a regular file', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('p.sock');
  await createStaleSocket(path);
  const server = createRegistrationServer({ socketPath: path, info });
  t.after(() => server.stop());
  await server.start();
  const conn = await dialRegistration(path, { timeoutMs: 10_000 });
  t.after(() => conn.close());
  assert.equal((await conn.getInfo({ timeoutMs: 5_000 })).name, 'n');

  const filePath = dir.join('file.sock');
  await writeFile(filePath, 'data');
  const blocked = createRegistrationServer({ socketPath: filePath, info });
  await assert.rejects(blocked.start(), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_INVALID_ARGUMENT'));
    assert.match(err.message, /not a socket/);
    return true;
  });
  assert.ok(existsSync(filePath));
});

test('a stopped server can start again on the same path', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const server = createRegistrationServer({ socketPath: dir.join('p.sock'), info });
  t.after(() => server.stop());
  await server.start();
  await server.stop();
  await server.start();
  const conn = await dialRegistration(server.socketPath, { timeoutMs: 10_000 });
  t.after(() => conn.close());
  assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), info);
});

test('nextStatus hands out each status once, buffered ones first, and times out when none comes', async (t) => {
  const { server, conn } = await connectedServer(t, { info });
  await conn.notifyRegistrationStatus({ pluginRegistered: false, error: 'first' }, { timeoutMs: 5_000 });
  const early = await server.nextStatus();
  const later = server.nextStatus();
  await conn.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, { timeoutMs: 5_000 });
  assert.deepEqual(early, { pluginRegistered: false, error: 'first' });
  assert.deepEqual(await later, { pluginRegistered: true, error: '' });
  await assert.rejects(server.nextStatus(20), /timed out after 20 ms/);
  assert.equal(server.statuses.length, 2);
});

test('the info function failing is reported to the caller as a GetInfo error', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const server = createRegistrationServer({
    socketPath: dir.join('p.sock'),
    info: () => {
      throw new Error('not ready yet');
    },
  });
  t.after(() => server.stop());
  await server.start();
  const conn = await dialRegistration(server.socketPath, { timeoutMs: 10_000 });
  t.after(() => conn.close());
  await assert.rejects(conn.getInfo({ timeoutMs: 5_000 }), (err: unknown) => {
    assert.ok(isBerthError(err, 'BERTH_GET_INFO_FAILED'));
    assert.match(err.message, /not ready yet/);
    return true;
  });
});

test('await using disposes the server', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('p.sock');
  {
    await using server = createRegistrationServer({ socketPath: path, info });
    await server.start();
    assert.ok(existsSync(path));
  }
  assert.equal(existsSync(path), false);
});
