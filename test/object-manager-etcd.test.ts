/**
 * The shared object-manager suite over the etcd source, against a real etcd
 * (/usr/bin/etcd, started once for this file). Each test gets its own key
 * prefix, and its keys are deleted again in cleanup.
 */
import { randomUUID } from 'node:crypto';
import { after } from 'node:test';
import { Etcd3 } from 'etcd3';
import { createEtcdSource } from '../src/objects/etcd.js';
import { type EtcdServer, startEtcdServer } from '../src/testing/harness/index.js';
import { defineObjectManagerSuite } from './object-manager-suite.js';

let shared: Promise<{ server: EtcdServer; client: Etcd3 }> | undefined;

/** One etcd (and one client) for the whole file, started by the first test that needs it. */
function etcd(): Promise<{ server: EtcdServer; client: Etcd3 }> {
  shared ??= startEtcdServer().then((server) => ({ server, client: new Etcd3({ hosts: server.endpoint }) }));
  return shared;
}

after(async () => {
  if (shared === undefined) return;
  const { server, client } = await shared;
  client.close();
  await server.stop();
});

defineObjectManagerSuite('etcd', async () => {
  const { server, client } = await etcd();
  const prefix = `/berth-suite/${randomUUID()}/`;
  const source = createEtcdSource({ endpoints: [server.endpoint], prefix, client });
  return {
    source,
    put: async (resource, obj) => {
      await source.putObject(resource, obj);
    },
    remove: async (resource, namespace, name) => {
      await source.deleteObject(resource, namespace, name);
    },
    cleanup: async () => {
      await source.stop();
      await client.delete().prefix(prefix);
    },
  };
});
