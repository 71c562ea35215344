/**
 * The legacy kubelet.sock server's start and stop on a real socket: it serves
 * and removes its own socket file, and when another process already serves the
 * path (a kubelet, another berth) it refuses to start and its stop leaves that
 * process's socket file alone.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { test } from 'node:test';
import { isBerthError, silentLogger } from '../../common/index.js';
import { createTempDir } from '../../testing/index.js';
import { KUBELET_SOCKET_NAME, LegacyRegistrationServer } from './legacy-registration-server.js';

const accepts = (path: string) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

test('the legacy server removes its own socket file at stop', async (t) => {
  const dir = createTempDir('berth-legacy-');
  t.after(() => dir.remove());
  const server = new LegacyRegistrationServer(dir.path, async () => {}, silentLogger);
  await server.start();
  assert.equal(await accepts(server.socketPath), true);
  await server.stop();
  assert.equal(existsSync(server.socketPath), false);
});

test("a kubelet.sock another process serves: start refuses, stop leaves that process's socket", async (t) => {
  const dir = createTempDir('berth-legacy-');
  const path = dir.join(KUBELET_SOCKET_NAME);
  const other = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => other.listen(path, resolve));
  t.after(async () => {
    await new Promise<void>((resolve) => other.close(() => resolve()));
    dir.remove();
  });
  const server = new LegacyRegistrationServer(dir.path, async () => {}, silentLogger);
  await assert.rejects(
    server.start(),
    (err: unknown) => isBerthError(err, 'BERTH_DAEMON_RUNNING') && err.message.includes(path),
  );
  await server.stop();
  assert.equal(existsSync(path), true, 'the other process keeps its socket file');
  assert.equal(await accepts(path), true, 'and still serves');
});
