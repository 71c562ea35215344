import assert from 'node:assert/strict';
import { lstatSync } from 'node:fs';
import { connect } from 'node:net';
import { test } from 'node:test';
import { createStaleSocket } from './stale-socket.js';
import { createTempDir } from './temp-dir.js';

test('createStaleSocket leaves a socket file that refuses connections', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('stale.sock');
  await createStaleSocket(path);
  assert.ok(lstatSync(path).isSocket());
  const code = await new Promise<string | undefined>((resolve) => {
    const socket = connect({ path });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
  });
  assert.equal(code, 'ECONNREFUSED');
});

test('createStaleSocket reports a path it cannot bind', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  await assert.rejects(
    createStaleSocket(dir.join('missing-dir', 'x.sock')),
    /could not leave a stale socket/,
  );
});
