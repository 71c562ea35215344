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
import { createPluginManager } from 'berth/plugin-manager';
import { createExamplePlugin } from 'berth/registration';
import { createGrpcDispenser, createRegistry, createRegistryBridge } from 'berth/registry';
import { createSqliteStorage } from 'berth/storage';
import { createTempDir, nextWithin, waitFor } from 'berth/testing';

test('README library example: plugin manager → registry, subscribe, wait, dispense', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());

  // --- as in the README ---
  const storage = createSqliteStorage({ path: dir.join('state.db') });
  const grpc = createGrpcDispenser(); // ready gRPC clients, one per live instance
  const registry = createRegistry({ storage, defaultDispenser: grpc.dispenser });
  grpc.attach(registry); // closes the clients of instances that go away
  await registry.start(); // opens the storage and restores what it holds
  const bridge = createRegistryBridge({ registry });

  const manager = createPluginManager({ pluginsDir: dir.join('plugins') });
  const type = 'example.com/storage';
  manager.addHandler(
    type,
    createVersionedHandler({ type, versions: ['v1'], delegate: bridge.handlerFor(type) }),
  );
  await manager.start();
  await bridge.reconcileRestored(manager.liveSocketPaths());

  const events = registry.subscribe(type, { signal: AbortSignal.timeout(60_000) })[Symbol.asyncIterator]();
  // --- end of README excerpt ---

  const plugin = createExamplePlugin({
    socketPath: dir.join('plugins', 'my-driver.sock'),
    name: 'my-driver',
    type,
    versions: ['v1'],
  });
  t.after(async () => {
    await plugin.stop();
    await manager.stop();
    await registry.stop();
    await grpc.stop();
    await storage.stop();
  });
  await plugin.start();

  const event = await nextWithin(events, 'the registered event');
  assert.equal(event.type, 'registered');
  const found = await registry.waitForPlugin(type, 'my-driver', { signal: AbortSignal.timeout(30_000) });
  assert.equal(found.connectionInfo?.socketPath, plugin.socketPath);
  assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
  const client = await registry.dispensePlugin(type, 'my-driver');
  assert.equal(client, await registry.dispensePlugin(type, 'my-driver'), 'the ready client is reused');
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
