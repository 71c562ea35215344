/**
 * The request rewriter, checked against the real judge: Node's HTTP/2 server
 * (nghttp2). Hand-built client bytes (plain and Huffman strings, every
 * indexing kind, indexed names, dynamic-table references across requests,
 * CONTINUATION, padding and priority, one-byte TCP chunks) go through
 * `authorityFixingConnection` into an http2 server, which must accept each
 * request and see the `:authority` we expect. Then nghttp2's own client
 * encoder, and the bounds.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { connect, createServer, type Server as NetServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { encodeInteger, encodeLiteral, huffmanEncode } from '../hpack/index.js';
import { createTempDir, type TempDir } from '../testing/index.js';
import { authorityFixingConnection } from './authority-fixing-connection.js';
import { H2RequestRewriter, H2RewriteError, sameLengthAuthority } from './h2-request-rewriter.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const KUBELET_SOCK = '/var/lib/kubelet/device-plugins/kubelet.sock';

function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}
const settings = () => frame(4, 0, 0, Buffer.alloc(0));
const headers = (streamId: number, block: Buffer, flags = 0x5) => frame(1, flags, streamId, block);
const indexed = (index: number) => Buffer.from(encodeInteger(index, 7, 0x80));
/** A literal whose value is Huffman-coded (what grpc-go and nghttp2 send when it is shorter). */
function huffmanLiteral(kind: 0x40 | 0x00 | 0x10, nameIndex: number, value: string): Buffer {
  const code = huffmanEncode(value);
  return Buffer.from([
    ...encodeInteger(nameIndex, kind === 0x40 ? 6 : 4, kind),
    ...encodeInteger(code.length, 7, 0x80),
    ...code,
  ]);
}
/** :method POST, :scheme http, :path /x (static 3, 6, then a literal path). */
const requestStart = () =>
  Buffer.concat([indexed(3), indexed(6), encodeLiteral('without-indexing', 4, ':path', '/x')]);

interface Seen {
  authority: string | undefined;
  status: 'answered' | 'reset';
}

/** An http2 server behind the authority fix, on a unix socket. */
class Judge {
  readonly seen: Array<string | undefined> = [];
  readonly refusals: Error[] = [];
  readonly #http2 = http2.createServer();
  readonly #net: NetServer;
  readonly #sockets = new Set<Socket>();

  constructor(readonly socketPath: string) {
    this.#http2.on('stream', (stream, fields) => {
      this.seen.push(fields[':authority']);
      stream.respond({ ':status': 200 });
      stream.end();
    });
    this.#net = createServer((socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      this.#http2.emit(
        'connection',
        authorityFixingConnection(socket, { onRefused: (err) => this.refusals.push(err) }),
      );
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.#net.listen(this.socketPath, resolve));
  }

  close(): Promise<void> {
    this.#http2.close();
    for (const socket of this.#sockets) socket.destroy();
    return new Promise((resolve) => this.#net.close(() => resolve()));
  }
}

/**
 * Sends the bytes (in chunks of `chunkSize`, or whole) and reads the server's
 * frames until every stream in `streams` is answered (HEADERS) or reset.
 */
function exchange(
  path: string,
  bytes: Buffer,
  streams: number[],
  chunkSize = bytes.length,
): Promise<Map<number, Seen['status']>> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(path);
    const results = new Map<number, Seen['status']>();
    let got = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer for streams ${streams} (got ${[...results]})`));
    }, 10_000);
    socket.on('connect', () => {
      for (let i = 0; i < bytes.length; i += chunkSize) socket.write(bytes.subarray(i, i + chunkSize));
    });
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      while (got.length >= 9) {
        const length = got.readUIntBE(0, 3);
        if (got.length < 9 + length) break;
        const type = got[3];
        const streamId = got.readUInt32BE(5) & 0x7fffffff;
        if (type === 1 && streams.includes(streamId)) results.set(streamId, 'answered');
        if (type === 3 && streams.includes(streamId)) results.set(streamId, 'reset');
        if (type === 7) results.set(0, 'reset');
        got = got.subarray(9 + length);
      }
      if (streams.every((s) => results.has(s)) || results.has(0)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(results);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(results);
    });
    socket.on('error', () => {});
  });
}

describe('H2RequestRewriter with nghttp2 as the judge', () => {
  let dir: TempDir;
  let judge: Judge;
  let n = 0;
  before(async () => {
    dir = createTempDir('berth-h2rw-');
  });
  after(() => dir.remove());

  const fresh = async () => {
    judge = new Judge(dir.join(`judge-${n++}.sock`));
    await judge.listen();
    return judge;
  };
  const closeJudge = () => judge.close();

  it('without the fix nghttp2 refuses the path authority and a missing one (the bug this fixes)', async () => {
    const server = http2.createServer();
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.end();
    });
    const path = dir.join('plain.sock');
    await new Promise<void>((resolve) => server.listen(path, resolve));
    const bytes = Buffer.concat([
      PREFACE,
      settings(),
      headers(
        1,
        Buffer.concat([requestStart(), encodeLiteral('incremental', 1, ':authority', KUBELET_SOCK)]),
      ),
      headers(3, requestStart()),
    ]);
    const results = await exchange(path, bytes, [1, 3]);
    await new Promise((resolve) => server.close(resolve));
    assert.deepEqual([results.get(1), results.get(3)], ['reset', 'reset']);
  });

  it('rewrites a path authority in every representation, plain and Huffman, keeping the length', async (t) => {
    await fresh();
    t.after(closeJudge);
    const blocks = [
      encodeLiteral('incremental', 1, ':authority', KUBELET_SOCK),
      encodeLiteral('incremental', 0, ':authority', KUBELET_SOCK),
      encodeLiteral('without-indexing', 1, ':authority', KUBELET_SOCK),
      encodeLiteral('never-indexed', 0, ':authority', KUBELET_SOCK),
      huffmanLiteral(0x40, 1, KUBELET_SOCK),
      // A UTF-8 path: each octet of the two-octet ü is refused on its own.
      huffmanLiteral(0x10, 1, Buffer.from('/tmp/a b/ü.sock').toString('latin1')),
    ];
    const bytes = Buffer.concat([
      PREFACE,
      settings(),
      ...blocks.map((authority, i) => headers(2 * i + 1, Buffer.concat([requestStart(), authority]))),
    ]);
    const streams = blocks.map((_, i) => 2 * i + 1);
    const results = await exchange(judge.socketPath, bytes, streams);
    assert.deepEqual(
      streams.map((s) => results.get(s)),
      streams.map(() => 'answered'),
    );
    const rewritten = sameLengthAuthority(KUBELET_SOCK);
    assert.equal(rewritten, '_var_lib_kubelet_device-plugins_kubelet.sock');
    assert.equal(rewritten.length, KUBELET_SOCK.length);
    assert.deepEqual(judge.seen, [rewritten, rewritten, rewritten, rewritten, rewritten, '_tmp_a_b___.sock']);
  });

  it('keeps the dynamic table in step: indexed references to a rewritten entry, evictions, later literals', async (t) => {
    await fresh();
    t.after(closeJudge);
    // Request 1 adds the path authority (dynamic index 62) and a custom header.
    // Request 2 refers to both by index and adds another entry.
    // Request 3 refers to the authority at its new index (63) and to the newest entry (62).
    const custom = encodeLiteral('incremental', 0, 'x-custom', 'one');
    const first = Buffer.concat([requestStart(), huffmanLiteral(0x40, 1, KUBELET_SOCK), custom]);
    const second = Buffer.concat([
      requestStart(),
      indexed(63),
      indexed(62),
      encodeLiteral('incremental', 0, 'x-other', 'two'),
    ]);
    const third = Buffer.concat([requestStart(), indexed(64), indexed(62), indexed(63)]);
    const bytes = Buffer.concat([
      PREFACE,
      settings(),
      headers(1, first),
      headers(3, second),
      headers(5, third),
    ]);
    const results = await exchange(judge.socketPath, bytes, [1, 3, 5]);
    assert.deepEqual([results.get(1), results.get(3), results.get(5)], ['answered', 'answered', 'answered']);
    const rewritten = sameLengthAuthority(KUBELET_SOCK);
    assert.deepEqual(judge.seen, [rewritten, rewritten, rewritten]);
  });

  it('stays in step when a small table evicts rewritten entries', async (t) => {
    await fresh();
    t.after(closeJudge);
    // A 100-byte table holds one authority entry (45 + 32 = 77 bytes): each new one evicts the last.
    const sizeUpdate = Buffer.from(encodeInteger(100, 5, 0x20));
    const blocks = [
      Buffer.concat([
        sizeUpdate,
        requestStart(),
        encodeLiteral('incremental', 1, ':authority', KUBELET_SOCK),
      ]),
      Buffer.concat([
        requestStart(),
        encodeLiteral('incremental', 1, ':authority', '/run/other/plugin.sock'),
      ]),
      Buffer.concat([requestStart(), indexed(62)]),
    ];
    const bytes = Buffer.concat([PREFACE, settings(), ...blocks.map((b, i) => headers(2 * i + 1, b))]);
    const results = await exchange(judge.socketPath, bytes, [1, 3, 5]);
    assert.deepEqual([...results.values()], ['answered', 'answered', 'answered']);
    assert.deepEqual(judge.seen.slice(1), ['_run_other_plugin.sock', '_run_other_plugin.sock']);
  });

  it('adds localhost to a request without :authority, after a size update, and leaves trailers alone', async (t) => {
    await fresh();
    t.after(closeJudge);
    const sizeUpdate = Buffer.from(encodeInteger(4096, 5, 0x20));
    const trailers = encodeLiteral('without-indexing', 0, 'x-trailer', 'yes');
    const bytes = Buffer.concat([
      PREFACE,
      settings(),
      headers(1, requestStart()),
      headers(3, Buffer.concat([sizeUpdate, requestStart()]), 0x4),
      headers(3, trailers, 0x5),
      headers(5, Buffer.concat([requestStart(), indexed(1)])),
    ]);
    const results = await exchange(judge.socketPath, bytes, [1, 3, 5]);
    assert.deepEqual([...results.values()].sort(), ['answered', 'answered', 'answered']);
    assert.deepEqual(judge.seen, ['localhost', 'localhost', 'localhost']);
    const rewriter = new H2RequestRewriter();
    const out = Buffer.concat(rewriter.push(Buffer.concat([PREFACE, settings(), headers(3, trailers, 0x5)])));
    assert.equal(rewriter.rewritten, 0, 'a block without pseudo-headers is not a request');
    assert.equal(out.length, PREFACE.length + 9 + 9 + trailers.length);
  });

  it('handles CONTINUATION, padding and priority, and a block split across one-byte chunks', async (t) => {
    await fresh();
    t.after(closeJudge);
    const block = Buffer.concat([
      requestStart(),
      encodeLiteral('incremental', 1, ':authority', KUBELET_SOCK),
      encodeLiteral('without-indexing', 0, 'x-long', 'v'.repeat(300)),
    ]);
    const padded = Buffer.concat([
      Buffer.from([4]),
      Buffer.from([0, 0, 0, 0, 15]),
      block.subarray(0, 10),
      Buffer.alloc(4),
    ]);
    const bytes = Buffer.concat([
      PREFACE,
      settings(),
      frame(1, 0x8 | 0x20 | 0x1, 1, padded),
      frame(9, 0, 1, block.subarray(10, 100)),
      frame(9, 0, 1, Buffer.alloc(0)),
      frame(9, 0x4, 1, block.subarray(100)),
      frame(0, 0, 0, Buffer.alloc(0)).subarray(0, 0),
    ]);
    const whole = await exchange(judge.socketPath, bytes, [1]);
    assert.equal(whole.get(1), 'answered');
    const chunked = await exchange(judge.socketPath, bytes, [1], 1);
    assert.equal(chunked.get(1), 'answered');
    assert.deepEqual(judge.seen, [sameLengthAuthority(KUBELET_SOCK), sameLengthAuthority(KUBELET_SOCK)]);

    // The same bytes fed one at a time come out as fed whole.
    const once = Buffer.concat(new H2RequestRewriter().push(bytes));
    const byByte = new H2RequestRewriter();
    const pieces: Buffer[] = [];
    for (let i = 0; i < bytes.length; i++) pieces.push(...byByte.push(bytes.subarray(i, i + 1)));
    assert.deepEqual(Buffer.concat(pieces), once);
  });

  it('passes a block that needs no change through byte for byte, DATA frames too', () => {
    const block = Buffer.concat([requestStart(), huffmanLiteral(0x40, 1, 'localhost')]);
    const bytes = Buffer.concat([
      PREFACE,
      settings(),
      frame(1, 0x4 | 0x8, 1, Buffer.concat([Buffer.from([2]), block, Buffer.alloc(2)])),
      frame(0, 0x1, 1, Buffer.from('payload')),
      headers(3, Buffer.concat([requestStart(), indexed(62)])),
    ]);
    const rewriter = new H2RequestRewriter();
    assert.deepEqual(Buffer.concat(rewriter.push(bytes)), bytes);
    assert.equal(rewriter.rewritten, 0);
  });

  it("accepts nghttp2's own client encoder (Huffman, dynamic table) sending a path authority on many requests", async (t) => {
    await fresh();
    t.after(closeJudge);
    const session = http2.connect('http://localhost', { createConnection: () => connect(judge.socketPath) });
    t.after(() => session.close());
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = session.request({ ':authority': KUBELET_SOCK, ':path': `/call/${i}`, ':method': 'POST' });
        req.on('response', (h) =>
          h[':status'] === 200 ? resolve() : reject(new Error(`status ${h[':status']}`)),
        );
        req.on('error', reject);
        req.end();
        req.resume();
      });
    }
    assert.deepEqual(judge.seen, Array(5).fill(sameLengthAuthority(KUBELET_SOCK)));
  });

  it('refuses garbage with a connection error and keeps serving others', async (t) => {
    await fresh();
    t.after(closeJudge);
    const refuse = (bytes: Buffer, pattern: RegExp, maxHeaderBlockBytes?: number) =>
      assert.throws(
        () =>
          new H2RequestRewriter(maxHeaderBlockBytes === undefined ? {} : { maxHeaderBlockBytes }).push(bytes),
        (err: unknown) => err instanceof H2RewriteError && pattern.test(err.message),
      );
    refuse(Buffer.from('GET / HTTP/1.1\r\n\r\n'), /preface/);
    refuse(Buffer.concat([PREFACE, headers(1, Buffer.from([0xbf]))]), /outside the tables/);
    refuse(Buffer.concat([PREFACE, headers(1, Buffer.from([0x40, 0x81, 0x00, 0x01, 0x61]))]), /EOS|padding/);
    refuse(Buffer.concat([PREFACE, frame(1, 0, 1, requestStart()), settings()]), /interrupts a header block/);
    refuse(Buffer.concat([PREFACE, frame(9, 0x4, 1, requestStart())]), /CONTINUATION frame without/);
    refuse(
      Buffer.concat([PREFACE, frame(1, 0, 1, requestStart()), frame(9, 4, 3, Buffer.alloc(0))]),
      /stream 3/,
    );
    refuse(Buffer.concat([PREFACE, frame(1, 0x8 | 0x4, 1, Buffer.from([9, 0x82]))]), /padding/);
    // The bound counts the whole block: many small CONTINUATION frames too.
    const flood = Buffer.concat([
      PREFACE,
      frame(1, 0, 1, requestStart()),
      ...Array(200).fill(frame(9, 0, 1, Buffer.alloc(0))),
    ]);
    refuse(flood, /exceeds 1024 bytes/, 1024);
    refuse(Buffer.concat([PREFACE, frame(1, 0x4, 1, Buffer.alloc(70_000))]), /exceeds 65536 bytes/);

    const dead = await exchange(
      judge.socketPath,
      Buffer.concat([PREFACE, settings(), headers(1, Buffer.from([0xbf]))]),
      [1],
    );
    assert.equal(dead.get(1), undefined, 'no answer: the connection is closed');
    assert.match(judge.refusals[0]?.message ?? '', /outside the tables/);
    const alive = await exchange(
      judge.socketPath,
      Buffer.concat([PREFACE, settings(), headers(1, Buffer.concat([requestStart(), indexed(1)]))]),
      [1],
    );
    assert.equal(alive.get(1), 'answered');
  });
});
