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
import { createTempDir } from '../testing/index.js';
import { listenUnixGrpc } from './unix-grpc-server.js';

const echo = {
  path: '/test.Echo/Say',
  requestStream: false,
  responseStream: false,
  requestSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (b: Buffer) => b,
  responseDeserialize: (b: Buffer) => b,
} as const;

/** One gRPC unary call over raw HTTP/2 with the given :authority (none when undefined). */
function rawCall(socketPath: string, authority: string | undefined, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const session = http2.connect('http://localhost', { createConnection: () => connect(socketPath) });
    session.on('error', reject);
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
