/**
 * shutdownUnixGrpc with a real grpc-js server and client on a unix socket: a
 * call that ends within the grace is answered and the stop waits for it; a
 * call that never ends is cancelled once the grace is over and its client
 * hears so; an idle connection does not hold the stop. The stop does not
 * depend on tryShutdown's callback, which node 22 and 24 call at once.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { it } from 'node:test';
import {
  Client,
  credentials,
  Server,
  type ServerUnaryCall,
  type ServiceError,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { ECHO_METHOD } from '../testing/harness/index.js';
import { createTempDir } from '../testing/index.js';
import { listenUnixGrpc } from './unix-grpc-server.js';
import { shutdownUnixGrpc } from './unix-grpc-shutdown.js';

const echo = ECHO_METHOD;

/** A server whose calls wait until `answer` is called (never, unless the test does). */
async function holdingServer(t: { after(fn: () => unknown): void }) {
  const dir = createTempDir('berth-ugs-stop-');
  t.after(() => dir.remove());
  const held: Array<() => void> = [];
  const server = new Server();
  server.addService(
    { Say: echo },
    {
      Say: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) =>
        held.push(() => callback(null, call.request)),
    },
  );
  const socketPath = dir.join('s.sock');
  const listener = await listenUnixGrpc(server, socketPath);
  t.after(() => server.forceShutdown());
  const client = new Client(`unix://${socketPath}`, credentials.createInsecure());
  t.after(() => client.close());
  const call = () =>
    new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(
        echo.path,
        echo.requestSerialize,
        echo.responseDeserialize,
        Buffer.from('hi'),
        (err, reply) => (err ? reject(err) : resolve(reply as Buffer)),
      ),
    );
  const waitHeld = async (n: number) => {
    while (held.length < n) await new Promise((resolve) => setImmediate(resolve));
  };
  return { server, listener, client, call, held, waitHeld };
}

it('a call that ends within the grace is answered, and the stop waits for it', async (t) => {
  const { server, listener, call, held, waitHeld } = await holdingServer(t);
  const reply = call();
  await waitHeld(1);
  let stopped = false;
  const stopping = shutdownUnixGrpc(server, listener, 30_000).then(() => (stopped = true));
  // The stop is waiting for the running call, not done already (as tryShutdown's callback is on node 22+).
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(stopped, false);
  held[0]?.();
  assert.equal((await reply).toString(), 'hi');
  await stopping;
});

it('a call that never ends is cancelled once the grace is over, and its client hears so', async (t) => {
  const { server, listener, call, waitHeld } = await holdingServer(t);
  const reply = call();
  await waitHeld(1);
  const started = performance.now();
  await shutdownUnixGrpc(server, listener, 300);
  const took = performance.now() - started;
  assert.ok(took >= 250, `the stop gave the call its grace: ${took.toFixed(0)} ms`);
  await assert.rejects(reply, (err: ServiceError) => {
    assert.equal(typeof err.code, 'number');
    assert.notEqual(err.code, 0);
    return true;
  });
});

it('an idle connection does not hold the stop for the grace', async (t) => {
  const { server, listener, call, held, waitHeld } = await holdingServer(t);
  const reply = call();
  await waitHeld(1);
  held[0]?.();
  await reply; // the connection stays open, idle
  const started = performance.now();
  await shutdownUnixGrpc(server, listener, 30_000);
  assert.ok(performance.now() - started < 15_000, 'an idle connection closed at once');
});
