/**
 * The README's "berth as a library" example, run for real through the
 * package's own exports (`berth/...` self-references resolve via package.json
 * "exports"), so the documented API cannot drift from the code.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { createVersionedHandler } from 'berth/handlers';
import { createDirectorySource, createObjectManagers } from 'berth/objects';
import { createPluginNode } from 'berth/plugin-node';
import { createExamplePlugin } from 'berth/registration';
import { createGrpcDispenser } from 'berth/registry';
import { createSqliteStorage } from 'berth/storage';
import { createTempDir, nextWithin, waitFor } from 'berth/testing';

/** The README's plugin-node excerpt, with the paths of a test's temp dir. */
async function readmeNode(dir: { join(...parts: string[]): string }) {
  // --- as in the README ---
  const type = 'example.com/storage';
  const storage = createSqliteStorage({ path: dir.join('state.db') });
  const grpc = createGrpcDispenser(); // ready gRPC clients, one per live instance
  const node = createPluginNode({
    pluginsDir: dir.join('plugins'),
    storage,
    defaultDispenser: grpc.dispenser,
    // type -> handler; each is handed the handler that records the plugin in the registry
    handlers: {
      [type]: (registry) => createVersionedHandler({ type, versions: ['v1'], delegate: registry }),
    },
  });
  grpc.attach(node.registry); // closes the clients of instances that go away
  await node.start(); // opens the storage, first scan; restored plugins confirmed or dropped
  // --- end of README excerpt (it goes on: subscribe, waitForPlugin, dispensePlugin, stop) ---
  return {
    type,
    node,
    stop: async () => {
      await node.stop();
      await grpc.stop();
      await storage.stop(); // the caller owns the storage
    },
  };
}

test('README library example: the plugin node registers, announces, waits, dispenses, and restarts like the daemon', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  mkdirSync(dir.join('plugins'), { recursive: true });

  const first = await readmeNode(dir);
  const { type } = first;
  const events = first.node.registry
    .subscribe(type, { signal: AbortSignal.timeout(60_000) })
    [Symbol.asyncIterator]();
  const keep = createExamplePlugin({
    socketPath: dir.join('plugins', 'my-driver.sock'),
    name: 'my-driver',
    type,
    versions: ['v1'],
  });
  const gone = createExamplePlugin({
    socketPath: dir.join('plugins', 'old.sock'),
    name: 'old',
    type,
    versions: ['v1'],
  });
  t.after(async () => {
    await keep.stop();
    await gone.stop();
  });
  await keep.start();
  await gone.start();

  const event = await nextWithin(events, 'the registered event');
  assert.equal(event.type, 'registered');
  const found = await first.node.registry.waitForPlugin(type, 'my-driver', {
    signal: AbortSignal.timeout(30_000),
  });
  assert.equal(found.connectionInfo?.socketPath, keep.socketPath);
  assert.deepEqual(await keep.nextStatus(), { pluginRegistered: true, error: '' });
  await first.node.registry.waitForPlugin(type, 'old', { signal: AbortSignal.timeout(30_000) });
  const client = await first.node.registry.dispensePlugin(type, 'my-driver');
  assert.equal(
    client,
    await first.node.registry.dispensePlugin(type, 'my-driver'),
    'the ready client is reused',
  );
  await first.stop();

  // While the library user is down, one plugin goes away; the other keeps serving.
  await gone.stop();
  const second = await readmeNode(dir);
  t.after(() => second.stop());
  const names = (second.node.registry.listPlugins(type) ?? []).map((p) => p.name);
  assert.deepEqual(names, ['my-driver'], 'the gone plugin is dropped by the time start resolves');
  assert.deepEqual(
    second.node.droppedAtStart.map((p) => p.name),
    ['old'],
  );
  // Confirmed by a fresh handshake, in place: its registration time is the first life's.
  assert.deepEqual(await keep.nextStatus(), { pluginRegistered: true, error: '' });
  const kept = second.node.registry.listInstances(type, 'my-driver')[0];
  assert.equal(kept?.registeredAt, found.registeredAt, 'no deregistered/registered pair for the live plugin');
});

test('README library example: object manager over the directory source', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  mkdirSync(dir.join('objects', 'secrets', 'default'), { recursive: true });
  writeFileSync(
    dir.join('objects', 'secrets', 'default', 'db.json'),
    JSON.stringify({ kind: 'Secret', metadata: { name: 'db' }, data: { password: 'aHVudGVyMg==' } }),
  );
  const pod = {
    metadata: { namespace: 'default', name: 'web', uid: 'uid-1' },
    spec: { containers: [{ name: 'app', envFrom: [{ secretRef: { name: 'db' } }] }] },
  };

  // --- as in the README ---
  const source = createDirectorySource({ root: dir.join('objects') });
  const managers = createObjectManagers({ strategy: 'Watch', source });
  await managers.start();
  managers.registerPod(pod); // a Kubernetes Pod object
  const secret = await waitFor('the secret', () => managers.secrets.getSecret('default', 'db'));
  // --- end of README excerpt (it goes on: managers.stop(), then source.stop()) ---
  t.after(async () => {
    await managers.stop();
    await source.stop(); // the caller owns the source
  });

  assert.deepEqual(secret.data, { password: 'aHVudGVyMg==' });
  await assert.rejects(
    managers.secrets.getSecret('default', 'other'),
    /object "default"\/"other" not registered/,
  );
});
