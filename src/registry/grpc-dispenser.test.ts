import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { createTempDir, nodePlugin, waitFor } from '../testing/index.js';
import { listenUnixGrpc } from '../unix-grpc/index.js';
import { createGrpcDispenser, createRegistry, type Registry } from './index.js';

/** A real gRPC server with no services on a unix socket: enough to become READY. */
async function startServer(t: TestContext, socketPath: string): Promise<grpc.Server> {
  const server = new grpc.Server();
  const listener = await listenUnixGrpc(server, socketPath);
  t.after(() => {
    void listener.close();
    server.forceShutdown();
  });
  return server;
}

function setup(t: TestContext, readyTimeoutMs?: number) {
  const dir = createTempDir('berth-gd-');
  t.after(() => dir.remove());
  // The dispenser comes first (the registry takes it in its options), then watches the registry.
  const dispenser = createGrpcDispenser(readyTimeoutMs === undefined ? {} : { readyTimeoutMs });
  const registry: Registry = createRegistry({ dispensers: { 'csi-node': dispenser.dispenser } });
  dispenser.attach(registry);
  t.after(async () => {
    await dispenser.stop();
    await registry.stop();
  });
  return { dir, registry, dispenser };
}

const stateOf = (client: grpc.Client) => client.getChannel().getConnectivityState(false);

async function dispenseClient(registry: Registry, name = 'my-plugin'): Promise<grpc.Client> {
  const client = await registry.dispensePlugin('csi-node', name);
  assert.ok(client instanceof grpc.Client);
  return client;
}

describe('gRPC dispenser', () => {
  it('watches exactly one registry', async (t) => {
    const { registry, dispenser } = setup(t);
    assert.throws(() => dispenser.attach(registry), /already attached/);
  });

  it('hands out one ready client per instance and reuses it', async (t) => {
    const { dir, registry } = setup(t);
    const socketPath = dir.join('p.sock');
    await startServer(t, socketPath);
    await registry.registerPlugin(nodePlugin(0, { connectionInfo: { socketPath } }));
    const [first, concurrent] = await Promise.all([dispenseClient(registry), dispenseClient(registry)]);
    assert.equal(stateOf(first), grpc.connectivityState.READY);
    assert.equal(concurrent, first);
    assert.equal(await dispenseClient(registry), first);
  });

  it('closes the client once its instance is deregistered', async (t) => {
    const { dir, registry } = setup(t);
    const socketPath = dir.join('p.sock');
    await startServer(t, socketPath);
    await registry.registerPlugin(nodePlugin(0, { connectionInfo: { socketPath } }));
    await registry.registerPlugin(nodePlugin(1, { name: 'other', connectionInfo: { socketPath } }));
    const client = await dispenseClient(registry);
    const otherClient = await dispenseClient(registry, 'other');
    assert.notEqual(client, otherClient, 'separate instances, separate clients');
    await registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-0');
    await waitFor('client closed', () => stateOf(client) === grpc.connectivityState.SHUTDOWN);
    assert.equal(stateOf(otherClient), grpc.connectivityState.READY, 'other instances keep theirs');
  });

  it('replaces the client when its instance is updated with a new socket', async (t) => {
    const { dir, registry } = setup(t);
    const oldSocket = dir.join('old.sock');
    const newSocket = dir.join('new.sock');
    await startServer(t, oldSocket);
    await startServer(t, newSocket);
    await registry.registerPlugin(nodePlugin(0, { connectionInfo: { socketPath: oldSocket } }));
    const before = await dispenseClient(registry);
    await registry.registerPlugin(nodePlugin(0, { connectionInfo: { socketPath: newSocket } }));
    await waitFor('old client closed', () => stateOf(before) === grpc.connectivityState.SHUTDOWN);
    const after = await dispenseClient(registry);
    assert.notEqual(after, before);
    assert.equal(stateOf(after), grpc.connectivityState.READY);
    assert.equal(after.getChannel().getTarget(), `unix:${newSocket}`);
  });

  it('keeps the client of an instance that went away and came back unchanged', async (t) => {
    const { dir, registry } = setup(t);
    const socketPath = dir.join('p.sock');
    await startServer(t, socketPath);
    await registry.registerPlugin(nodePlugin(0, { connectionInfo: { socketPath } }));
    await registry.registerPlugin(nodePlugin(1, { name: 'witness', connectionInfo: { socketPath } }));
    const client = await dispenseClient(registry);
    const witness = await dispenseClient(registry, 'witness');
    await registry.deregisterPlugin('csi-node', 'my-plugin', 'alloc-0');
    await registry.registerPlugin(nodePlugin(0, { connectionInfo: { socketPath } }));
    await registry.deregisterPlugin('csi-node', 'witness', 'alloc-1');
    // Events are handled in order: once the witness is closed, the earlier events were handled too.
    await waitFor('witness closed', () => stateOf(witness) === grpc.connectivityState.SHUTDOWN);
    assert.equal(stateOf(client), grpc.connectivityState.READY);
    assert.equal(await dispenseClient(registry), client);
  });

  it('fails with BERTH_DIAL_FAILED when nothing listens, and tries afresh next time', async (t) => {
    const { dir, registry } = setup(t, 300);
    const socketPath = dir.join('late.sock');
    await registry.registerPlugin(nodePlugin(0, { connectionInfo: { socketPath } }));
    await assert.rejects(registry.dispensePlugin('csi-node', 'my-plugin'), {
      code: 'BERTH_DIAL_FAILED',
      message: /did not become ready within 300 ms/,
    });
    await startServer(t, socketPath);
    assert.equal(stateOf(await dispenseClient(registry)), grpc.connectivityState.READY);
  });

  it('rejects an instance without a socket path', async (t) => {
    const { registry } = setup(t);
    await registry.registerPlugin(nodePlugin(0, { connectionInfo: { socketPath: '' } }));
    await assert.rejects(registry.dispensePlugin('csi-node', 'my-plugin'), {
      code: 'BERTH_SOCKET_PATH_EMPTY',
    });
  });

  it('stop() closes every client and refuses further dispensing; it is memoised', async (t) => {
    const { dir, registry, dispenser } = setup(t);
    const socketPath = dir.join('p.sock');
    await startServer(t, socketPath);
    await registry.registerPlugin(nodePlugin(0, { connectionInfo: { socketPath } }));
    const client = await dispenseClient(registry);
    const stopping = dispenser.stop();
    assert.equal(dispenser.stop(), stopping);
    await stopping;
    await dispenser[Symbol.asyncDispose]();
    assert.equal(dispenser.state, 'stopped');
    assert.equal(stateOf(client), grpc.connectivityState.SHUTDOWN);
    await assert.rejects(registry.dispensePlugin('csi-node', 'my-plugin'), { code: 'BERTH_SHUT_DOWN' });
  });
});
