/**
 * listenUnixGrpc with a real grpc-js server: a grpc-js client, and raw HTTP/2
 * gRPC calls carrying the path authority grpc-go sends, `localhost`, or no
 * authority at all, are all answered; close() removes the socket and lets
 * the server shut down.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http2 from 'node:http2';
import { connect } from 'node:net';
import { it } from 'node:test';
import { Client, credentials, Metadata, Server, type ServiceError } from '@grpc/grpc-js';
import { ECHO_METHOD } from '../testing/harness/index.js';
import { createTempDir } from '../testing/index.js';
import { listenUnixGrpc } from './unix-grpc-server.js';

const echo = ECHO_METHOD;

/** One gRPC unary call over raw HTTP/2 with the given :authority (none when undefined). */
function rawCall(socketPath: string, authority: string | undefined, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const session = http2.connect('http://localhost', { createConnection: () => connect(socketPath) });
    session.on('error', reject);
    // A connection the server closes before answering (after a resolve, this does nothing).
    session.on('close', () => reject(new Error('the connection closed before the reply')));
    const headers: http2.OutgoingHttpHeaders = {
      ':method': 'POST',
      ':path': echo.path,
      'content-type': 'application/grpc',
      te: 'trailers',
    };
    if (authority !== undefined) headers[':authority'] = authority;
    const req = session.request(headers);
    const frame = Buffer.alloc(5 + payload.length);
    frame.writeUInt32BE(payload.length, 1);
    frame.write(payload, 5);
    let body = Buffer.alloc(0);
    req.on('data', (chunk: Buffer) => (body = Buffer.concat([body, chunk])));
    req.on('trailers', (trailers) => {
      session.close();
      if (trailers['grpc-status'] !== '0') reject(new Error(`grpc-status ${trailers['grpc-status']}`));
      else resolve(body.subarray(5).toString());
    });
    req.on('error', (err) => {
      session.close();
      reject(err);
    });
    req.end(frame);
  });
}

it('serves grpc-js and raw calls with a path, localhost or no authority; close removes the socket', async (t) => {
  const dir = createTempDir('berth-ugs-');
  t.after(() => dir.remove());
  const server = new Server();
  server.addService(
    { say: echo },
    {
      say: (call: { request: Buffer }, callback: (err: null, reply: Buffer) => void) =>
        callback(null, Buffer.from(`echo ${call.request.toString()}`)),
    },
  );
  const socketPath = dir.join('echo.sock');
  const listener = await listenUnixGrpc(server, socketPath);
  t.after(() => server.forceShutdown());

  const client = new Client(`unix:${socketPath}`, credentials.createInsecure());
  t.after(() => client.close());
  const viaGrpcJs = await new Promise<string>((resolve, reject) =>
    client.makeUnaryRequest(
      echo.path,
      echo.requestSerialize,
      echo.responseDeserialize,
      Buffer.from('grpc-js'),
      new Metadata(),
      (err: ServiceError | null, reply?: Buffer) => (err ? reject(err) : resolve(reply?.toString() ?? '')),
    ),
  );
  assert.equal(viaGrpcJs, 'echo grpc-js');
  assert.equal(await rawCall(socketPath, socketPath, 'path'), 'echo path');
  assert.equal(await rawCall(socketPath, 'localhost', 'localhost'), 'echo localhost');
  // Node's client always sends an authority; an empty one is the nearest it gets to none.
  assert.equal(await rawCall(socketPath, '', 'empty'), 'echo empty');
  assert.equal(listener.refused, 0);

  // close() stops accepting at once; it resolves when the server has closed its sessions too.
  const closed = listener.close();
  assert.equal(existsSync(socketPath), false, 'the socket file is gone');
  await new Promise<void>((resolve, reject) => server.tryShutdown((err) => (err ? reject(err) : resolve())));
  client.close();
  await closed;
});

it('given a server factory: listens at once, builds the server once with the first connections, and answers them', async (t) => {
  const dir = createTempDir('berth-ugs-');
  t.after(() => dir.remove());
  let builds = 0;
  let release: () => void = () => {};
  const buildGate = new Promise<void>((resolve) => (release = resolve));
  let server: Server | undefined;
  const socketPath = dir.join('lazy.sock');
  const listener = await listenUnixGrpc(async () => {
    builds += 1;
    await buildGate; // both first calls arrive while the server is still being built
    server = new Server();
    server.addService(
      { say: echo },
      {
        say: (call: { request: Buffer }, callback: (err: null, reply: Buffer) => void) =>
          callback(null, Buffer.from(`echo ${call.request.toString()}`)),
      },
    );
    return server;
  }, socketPath);
  t.after(() => server?.forceShutdown());
  assert.equal(existsSync(socketPath), true, 'listening before any server exists');
  assert.equal(builds, 0, 'nothing built before a connection');
  const first = rawCall(socketPath, socketPath, 'first');
  const second = rawCall(socketPath, 'localhost', 'second');
  await new Promise<void>((resolve) => {
    const poll = () => (builds > 0 ? resolve() : setImmediate(poll));
    poll();
  });
  release();
  assert.deepEqual(await Promise.all([first, second]), ['echo first', 'echo second']);
  assert.equal(await rawCall(socketPath, socketPath, 'third'), 'echo third');
  assert.equal(builds, 1);
  assert.equal(listener.refused, 0);
  await listener.close();
});

it('given a server factory that fails: the waiting connection is closed and counted, the next one builds again', async (t) => {
  const dir = createTempDir('berth-ugs-');
  t.after(() => dir.remove());
  let builds = 0;
  const refusals: Error[] = [];
  let server: Server | undefined;
  const socketPath = dir.join('failing.sock');
  const listener = await listenUnixGrpc(
    async () => {
      builds += 1;
      if (builds === 1) throw new Error('cannot load grpc-js: EMFILE');
      server = new Server();
      server.addService(
        { say: echo },
        {
          say: (_call: unknown, callback: (err: null, reply: Buffer) => void) =>
            callback(null, Buffer.from('ok')),
        },
      );
      return server;
    },
    socketPath,
    { onRefused: (err) => refusals.push(err) },
  );
  t.after(() => server?.forceShutdown());
  await assert.rejects(rawCall(socketPath, 'localhost', 'x'));
  assert.equal(listener.refused, 1);
  assert.match(refusals[0]?.message ?? '', /cannot load grpc-js: EMFILE/);
  assert.equal(await rawCall(socketPath, 'localhost', 'y'), 'ok');
  assert.equal(builds, 2);
  await listener.close();
});
