import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { Etcd3 } from 'etcd3';
import { createTempDir } from '../temp-dir.js';
import { waitFor } from '../wait-for.js';
import { startEtcdServer } from './etcd-server.js';

async function answers(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(2_000) });
    return res.ok;
  } catch {
    return false;
  }
}

test('a missing etcd binary is a clear error, not a skip', async () => {
  await assert.rejects(startEtcdServer({ binary: '/nonexistent/etcd' }), {
    message: /^etcd not installed: apt-get install etcd-server/,
  });
});

test('starts a real etcd on loopback, and stop kills it and removes its temp data dir', async () => {
  const server = await startEtcdServer();
  assert.match(server.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(existsSync(server.dataDir));
  const client = new Etcd3({ hosts: server.endpoint });
  try {
    await client.put('k').value('v');
    assert.equal(await client.get('k').string(), 'v');
  } finally {
    client.close();
  }
  await server.stop();
  assert.equal(existsSync(server.dataDir), false);
  assert.equal(await answers(server.endpoint), false);
  await server.stop(); // idempotent
});

test('restart keeps the data and the endpoint; a given data dir is kept on stop', async () => {
  await using dir = createTempDir();
  const dataDir = dir.join('etcd');
  const server = await startEtcdServer({ dataDir });
  const client = new Etcd3({ hosts: server.endpoint });
  try {
    await client.put('k').value('before');
    await server.restart();
    // The client reconnects on its own; the first call after the restart may need a retry.
    assert.equal(await waitFor('read after restart', () => client.get('k').string()), 'before');
  } finally {
    client.close();
    await server.stop();
  }
  assert.ok(existsSync(dataDir), 'a caller-provided data dir is not removed');
});
