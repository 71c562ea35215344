/**
 * The handshake's HTTP/2 client against real HTTP/2 servers on unix sockets
 * that answer the way broken or hostile plugins do.
 */
import assert from 'node:assert/strict';
import http2, { type ServerHttp2Stream } from 'node:http2';
import { createServer, type Server } from 'node:net';
import { type TestContext, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isBerthError } from '../common/index.js';
import { createTempDir, waitFor } from '../testing/index.js';
import { connectSocket, GrpcCallError, openSession, startSession, unaryCall } from './h2-client.js';
import type { H2Connection } from './h2-connection.js';
import { connectPipeStream } from './pipe-stream.js';

type Answer = (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;

async function serveH2(t: TestContext, answer: Answer): Promise<string> {
  return (await serveH2With(t, {}, answer)).path;
}

async function call(t: TestContext, path: string, maxResponseBytes = 1024, timeoutMs = 5_000) {
  const attempt = await openSession(path, 5_000);
  assert.equal(attempt.kind, 'ready');
  if (attempt.kind !== 'ready') throw new Error('unreachable');
  t.after(() => attempt.session.destroy());
  return unaryCall(attempt.session, '/pluginregistration.Registration/GetInfo', new Uint8Array(), {
    timeoutMs,
    maxResponseBytes,
    what: 'test call',
  });
}

const grpcReply = (message: Buffer, flag = 0) => {
  const prefix = Buffer.alloc(5);
  prefix[0] = flag;
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
};

const ok =
  (body: Buffer): Answer =>
  (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(body);
  };

function rejectsWith(code: number, text: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof GrpcCallError, String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.message, text);
    return true;
  };
}

test('a well-formed reply resolves with the message bytes, and the request carries gRPC headers', async (t) => {
  let seen: http2.IncomingHttpHeaders = {};
  const path = await serveH2(t, (stream, headers) => {
    seen = headers;
    ok(grpcReply(Buffer.from([0x0a, 0x01, 0x41])))(stream, headers);
  });
  const reply = await call(t, path, 1024, 7_000);
  assert.deepEqual([...reply], [0x0a, 0x01, 0x41]);
  assert.equal(seen[':path'], '/pluginregistration.Registration/GetInfo');
  assert.equal(seen['content-type'], 'application/grpc');
  assert.equal(seen.te, 'trailers');
  assert.equal(seen['grpc-timeout'], '7000m');
});

test('a trailers-only error gives its status and the percent-decoded message', async (t) => {
  const path = await serveH2(t, (stream) => {
    stream.respond(
      {
        ':status': 200,
        'content-type': 'application/grpc',
        'grpc-status': '5',
        'grpc-message': 'no%20such%20plugin',
      },
      { endStream: true },
    );
  });
  await assert.rejects(call(t, path), rejectsWith(5, /^5 NOT_FOUND: no such plugin$/));
});

test('an HTTP error status without grpc-status maps as the gRPC spec says (404 → UNIMPLEMENTED)', async (t) => {
  const path = await serveH2(t, (stream) => {
    stream.respond({ ':status': 404 }, { endStream: true });
  });
  await assert.rejects(call(t, path), rejectsWith(12, /Received HTTP status code 404/));
});

test('a reply larger than the cap fails RESOURCE_EXHAUSTED, whether announced or streamed', async (t) => {
  const big = Buffer.alloc(64 * 1024, 1);
  const path = await serveH2(t, ok(grpcReply(big)));
  await assert.rejects(call(t, path, 1024), rejectsWith(8, /larger than max/));
  // A prefix that announces more than the cap, with a body small enough to arrive whole.
  const liar = Buffer.alloc(5);
  liar.writeUInt32BE(10_000_000, 1);
  const path2 = await serveH2(t, ok(liar));
  await assert.rejects(call(t, path2, 1024), rejectsWith(8, /10000000 vs\. 1024/));
});

test('a compressed reply, a missing message and a short body are INTERNAL errors naming the fault', async (t) => {
  const compressed = await serveH2(t, ok(grpcReply(Buffer.from([1, 2]), 1)));
  await assert.rejects(call(t, compressed), rejectsWith(13, /compressed/));
  const empty = await serveH2(t, ok(Buffer.alloc(0)));
  await assert.rejects(call(t, empty), rejectsWith(13, /No message received/));
  const short = Buffer.alloc(7);
  short.writeUInt32BE(10, 1);
  const truncated = await serveH2(t, ok(short));
  await assert.rejects(call(t, truncated), rejectsWith(13, /2 bytes after its prefix, which announced 10/));
});

test('a reset stream and an invalid grpc-status are errors, not hangs', async (t) => {
  const refused = await serveH2(t, (stream) => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM));
  await assert.rejects(call(t, refused), rejectsWith(14, /RST_STREAM with code 7/));
  const invalid = await serveH2(t, (stream) => {
    stream.respond({ ':status': 200, 'grpc-status': 'banana' }, { endStream: true });
  });
  await assert.rejects(call(t, invalid), rejectsWith(2, /invalid grpc-status "banana"/));
});

test('a server that never answers fails at the deadline with DEADLINE_EXCEEDED and cancels the stream', async (t) => {
  let cancelled = false;
  const path = await serveH2(t, (stream) => {
    stream.on('close', () => {
      cancelled = stream.rstCode === http2.constants.NGHTTP2_CANCEL;
    });
  });
  await assert.rejects(call(t, path, 1024, 100), rejectsWith(4, /Deadline exceeded/));
  const deadline = Date.now() + 10_000;
  while (!cancelled && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(cancelled, 'the server saw the stream cancelled');
});

test('a server that drops the connection mid-call fails the call UNAVAILABLE', async (t) => {
  const path = await serveH2(t, (stream) => stream.session?.destroy());
  await assert.rejects(call(t, path), rejectsWith(14, /connection closed before the call finished/));
});

test('an aborted call rejects with BERTH_ABORTED', async (t) => {
  const path = await serveH2(t, () => {});
  const attempt = await openSession(path, 5_000);
  assert.equal(attempt.kind, 'ready');
  if (attempt.kind !== 'ready') return;
  t.after(() => attempt.session.destroy());
  const controller = new AbortController();
  const pending = unaryCall(attempt.session, '/x/y', new Uint8Array(), {
    timeoutMs: 60_000,
    signal: controller.signal,
    maxResponseBytes: 10,
    what: 'the test call',
  });
  controller.abort();
  await assert.rejects(pending, (err: unknown) => isBerthError(err, 'BERTH_ABORTED'));
});

async function rawListener(t: TestContext, onConnection: (socket: import('node:net').Socket) => void) {
  const dir = createTempDir();
  const path = dir.join('raw.sock');
  const server: Server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.after(async () => {
    await new Promise((resolve) => server.close(resolve));
    dir.remove();
  });
  return path;
}

test('openSession: a refusal fails, an accept-and-close is transient, silence times out', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const missing = await openSession(dir.join('none.sock'), 1_000);
  assert.equal(missing.kind, 'failed');
  if (missing.kind === 'failed') assert.match(missing.failure.reason, /ENOENT/);

  const closing = await rawListener(t, (socket) => socket.destroy());
  const closed = await openSession(closing, 5_000);
  assert.equal(closed.kind, 'transient');

  const held: import('node:net').Socket[] = [];
  const silent = await rawListener(t, (socket) => {
    socket.on('error', () => {});
    held.push(socket);
  });
  try {
    assert.equal((await openSession(silent, 100)).kind, 'timeout');
  } finally {
    for (const socket of held) socket.destroy();
  }
});

/** A connection that takes no more calls fails one at once, UNAVAILABLE. */
async function refusesCalls(session: H2Connection): Promise<void> {
  const options = { timeoutMs: 1_000, maxResponseBytes: 10, what: 'a call it should refuse' };
  await assert.rejects(
    unaryCall(session, '/a/b', new Uint8Array(), options),
    rejectsWith(14, /connection is closed/),
  );
}

/** A server with options of its own (padding), answering every call with `answer`. */
async function serveH2With(t: TestContext, options: http2.ServerOptions, answer: Answer) {
  const dir = createTempDir();
  const path = dir.join('h2.sock');
  const server = http2.createServer(options);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => sessions.add(session));
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    answer(stream, headers);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.after(async () => {
    for (const session of sessions) session.destroy();
    await new Promise((resolve) => server.close(resolve));
    dir.remove();
  });
  return { path, sessions };
}

test('padded frames and a header block split over CONTINUATION frames decode, and the HPACK table stays in step', async (t) => {
  const longMessage = 'x'.repeat(40_000); // past one 16 KiB frame: nghttp2 sends CONTINUATION
  const { path } = await serveH2With(
    t,
    { paddingStrategy: http2.constants.PADDING_STRATEGY_MAX },
    (stream, headers) => {
      if (headers[':path'] === '/long/error') {
        stream.respond(
          {
            ':status': 200,
            'content-type': 'application/grpc',
            'grpc-status': '9',
            'grpc-message': longMessage,
          },
          { endStream: true },
        );
        return;
      }
      ok(grpcReply(Buffer.from('reply')))(stream, headers);
    },
  );
  const attempt = await openSession(path, 5_000);
  assert.equal(attempt.kind, 'ready');
  if (attempt.kind !== 'ready') return;
  t.after(() => attempt.session.destroy());
  const options = { timeoutMs: 5_000, maxResponseBytes: 1024, what: 'test call' };
  // Several calls on one connection: each decodes against the table the earlier ones filled.
  for (let i = 0; i < 3; i++) {
    assert.equal((await unaryCall(attempt.session, '/a/b', new Uint8Array(), options)).toString(), 'reply');
  }
  await assert.rejects(
    unaryCall(attempt.session, '/long/error', new Uint8Array(), options),
    rejectsWith(9, /^9 FAILED_PRECONDITION: x{40000}$/),
  );
  assert.equal((await unaryCall(attempt.session, '/a/b', new Uint8Array(), options)).toString(), 'reply');
});

test('a GOAWAY fails calls the server will not process, closes the connection, and tells whoever holds it', async (t) => {
  const { path, sessions } = await serveH2With(t, {}, () => {});
  const attempt = await openSession(path, 5_000);
  assert.equal(attempt.kind, 'ready');
  if (attempt.kind !== 'ready') return;
  t.after(() => attempt.session.destroy());
  let told = 0;
  attempt.session.onPeerClose(() => {
    told += 1;
  });
  const pending = unaryCall(attempt.session, '/never/answered', new Uint8Array(), {
    timeoutMs: 10_000,
    maxResponseBytes: 10,
    what: 'test call',
  });
  await waitFor('the server has the stream', () => sessions.size === 1);
  // Last stream id 0: the server processed none of ours.
  for (const session of sessions) session.goaway(http2.constants.NGHTTP2_NO_ERROR, 0);
  await assert.rejects(pending, rejectsWith(14, /GOAWAY/));
  await waitFor('the holder is told once', () => told === 1);
  assert.equal(attempt.session.closed, true);
  await refusesCalls(attempt.session);
});

test('a held connection answers the server PINGs, and its own PINGs are answered', async (t) => {
  const { path, sessions } = await serveH2With(t, {}, ok(grpcReply(Buffer.alloc(0))));
  const attempt = await openSession(path, 5_000);
  assert.equal(attempt.kind, 'ready');
  if (attempt.kind !== 'ready') return;
  t.after(() => attempt.session.destroy());
  await unaryCall(attempt.session, '/a/b', new Uint8Array(), {
    timeoutMs: 5_000,
    maxResponseBytes: 10,
    what: 'call',
  });
  assert.equal(attempt.session.holdIdle(), true);
  assert.equal(await attempt.session.ping(5_000), undefined, 'our PING is acknowledged');
  await waitFor('the server session', () => sessions.size === 1);
  const [session] = [...sessions];
  const rtt = await new Promise<number>((resolve, reject) =>
    session?.ping((err, duration) => (err ? reject(err) : resolve(duration))),
  );
  assert.ok(rtt >= 0, 'the server PING is acknowledged');
  // A held connection makes no calls.
  await refusesCalls(attempt.session);
});

test('a frame larger than the maximum frame size fails the connection instead of being buffered', async (t) => {
  const path = await rawListener(t, (socket) => {
    socket.on('error', () => {});
    socket.once('data', () => {
      // A SETTINGS frame, then a DATA frame header announcing 1 MiB.
      const settings = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
      const huge = Buffer.from([0x10, 0, 0, 0, 0, 0, 0, 0, 1]);
      socket.write(Buffer.concat([settings, huge]));
    });
  });
  const attempt = await openSession(path, 5_000);
  assert.equal(attempt.kind, 'ready');
  if (attempt.kind !== 'ready') return;
  t.after(() => attempt.session.destroy());
  await waitFor('the connection is failed', () => attempt.session.closed);
});

test('bytes read before a connection takes the socket over are kept for it (the shared read buffer)', async (t) => {
  const path = await serveH2(t, ok(grpcReply(Buffer.from([0x0a, 0x01, 0x42]))));
  const socket = connectPipeStream(path, () => {});
  t.after(() => socket.destroy());
  // The server's SETTINGS arrive, and other connections read into the same buffer meanwhile.
  await waitFor('the server SETTINGS read', () => socket.bytesRead > 0);
  const others = await Promise.all([call(t, path), call(t, path)]);
  for (const reply of others) assert.deepEqual([...reply], [0x0a, 0x01, 0x42]);
  const attempt = await startSession(socket, 5_000);
  assert.equal(attempt.kind, 'ready', 'the early SETTINGS were delivered to the connection');
  if (attempt.kind !== 'ready') return;
  const reply = await unaryCall(
    attempt.session,
    '/pluginregistration.Registration/GetInfo',
    new Uint8Array(),
    {
      timeoutMs: 5_000,
      maxResponseBytes: 1024,
      what: 'test call',
    },
  );
  assert.deepEqual([...reply], [0x0a, 0x01, 0x42]);
});

test("a connected socket does not keep its dial's AbortSignal, timer or promise alive (liveness holds it for good)", async (t) => {
  const dir = createTempDir('berth-h2-retain-');
  const server = createServer((socket) => socket.on('error', () => {}));
  t.after(() => {
    server.close();
    dir.remove();
  });
  const path = dir.join('plugin.sock');
  await new Promise<void>((resolve) => server.listen(path, resolve));
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  let signalRef: WeakRef<AbortSignal> | undefined;
  const socket = await (async () => {
    const controller = new AbortController();
    signalRef = new WeakRef(controller.signal);
    const attempt = await connectSocket(path, 5_000, controller.signal);
    assert.equal(attempt.kind, 'connected');
    if (attempt.kind !== 'connected') throw new Error('unreachable');
    return attempt.socket;
  })();
  t.after(() => socket.destroy());
  // The signal is unreachable from here; only the socket's listeners could keep it.
  await waitFor(
    'the dial signal collected while its socket stays open',
    async () => {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
      return signalRef?.deref() === undefined && !socket.destroyed;
    },
    { timeoutMs: 5_000 },
  );
});
