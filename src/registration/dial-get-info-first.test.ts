/**
 * GetInfo sent with the connection preface (DialOptions.getInfoFirstMs), as
 * grpc-go's client sends its first call: against a raw HTTP/2 server that
 * holds back its SETTINGS until it has read the call, which only a client
 * that does not wait for the server's SETTINGS can get past.
 */
import assert from 'node:assert/strict';
import { stat } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type TestContext, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { create, toBinary } from '@bufbuild/protobuf';
import { isBerthError } from '../common/index.js';
import { DynamicTable, decodeBlock, encodeLiteral } from '../hpack/index.js';
import { createTempDir, waitFor } from '../testing/index.js';
import { dialRegistration } from './dial.js';
import { PluginInfoSchema } from './gen/pluginregistration/api_pb.js';
import { Flag, FrameType, frame } from './h2-frames.js';
import { GET_INFO_PATH } from './registrar-wire.js';

const PREFACE_BYTES = 24;
const info = {
  type: 'DevicePlugin',
  name: 'example.com/early',
  endpoint: '',
  supportedVersions: ['v1beta1'],
};

interface Behaviour {
  /** Sends its SETTINGS only once the GetInfo call has arrived (a client that waits for them never gets there). */
  settingsAfterCall: boolean;
  /**
   * Per connection, by its index: `close` drops it once the call has arrived, `silent` never
   * answers the call, `hold` answers when the test calls `release()`.
   */
  onCall?: (connection: number) => 'answer' | 'close' | 'silent' | 'hold';
}

interface RawServer {
  path: string;
  connections: number;
  /** GetInfo calls read, over all connections. */
  getInfoCalls: number;
  /** Writes the held reply (`hold`), synchronously into the client's receive buffer. */
  release?: () => void;
}

/** GetInfo's reply: response headers, the length-prefixed PluginInfo, then trailers with grpc-status 0. */
function getInfoReply(streamId: number): Buffer {
  const message = Buffer.from(toBinary(PluginInfoSchema, create(PluginInfoSchema, info)));
  const prefixed = Buffer.alloc(5 + message.length);
  prefixed.writeUInt32BE(message.length, 1);
  message.copy(prefixed, 5);
  const headers = Buffer.concat([
    Buffer.from([0x88]), // :status 200, static table entry 8
    encodeLiteral('without-indexing', 31, 'content-type', 'application/grpc'),
  ]);
  const trailers = encodeLiteral('without-indexing', 0, 'grpc-status', '0');
  return Buffer.concat([
    frame(FrameType.HEADERS, Flag.END_HEADERS, streamId, headers),
    frame(FrameType.DATA, 0, streamId, prefixed),
    frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, streamId, trailers),
  ]);
}

async function serveRaw(t: TestContext, behaviour: Behaviour): Promise<RawServer> {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const state: RawServer = { path: dir.join('raw.sock'), connections: 0, getInfoCalls: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    const index = state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const table = new DynamicTable();
    let buffer = Buffer.alloc(0);
    let prefaceRead = false;
    if (!behaviour.settingsAfterCall) socket.write(frame(FrameType.SETTINGS, 0, 0));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!prefaceRead) {
        if (buffer.length < PREFACE_BYTES) return;
        buffer = buffer.subarray(PREFACE_BYTES);
        prefaceRead = true;
      }
      while (buffer.length >= 9) {
        const length = buffer.readUIntBE(0, 3);
        if (buffer.length < 9 + length) return;
        const type = buffer[3] as number;
        const streamId = buffer.readUInt32BE(5) & 0x7fff_ffff;
        const payload = buffer.subarray(9, 9 + length);
        buffer = buffer.subarray(9 + length);
        if (type !== FrameType.HEADERS) continue;
        const path = decodeBlock(payload, table, 4096).find((f) => f.name === ':path')?.value;
        if (path !== GET_INFO_PATH) continue;
        state.getInfoCalls += 1;
        const what = behaviour.onCall?.(index) ?? 'answer';
        if (what === 'close') {
          socket.destroy();
          return;
        }
        if (behaviour.settingsAfterCall) socket.write(frame(FrameType.SETTINGS, 0, 0));
        if (what === 'answer') socket.write(getInfoReply(streamId));
        if (what === 'hold') state.release = () => socket.write(getInfoReply(streamId));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(state.path, resolve));
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return state;
}

test('with getInfoFirstMs the call leaves with the preface: a server that holds its SETTINGS until the call arrives still answers', async (t) => {
  const server = await serveRaw(t, { settingsAfterCall: true });
  const conn = await dialRegistration(server.path, { timeoutMs: 10_000, getInfoFirstMs: 5_000 });
  t.after(() => conn.close());
  assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), info);
  assert.equal(server.getInfoCalls, 1);
  assert.equal(server.connections, 1);
  // A second getInfo() is a call of its own on the same connection.
  assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), info);
  assert.equal(server.getInfoCalls, 2);
});

test('without getInfoFirstMs the dial waits for the SETTINGS that server never sends first (the control)', async (t) => {
  const server = await serveRaw(t, { settingsAfterCall: true });
  await assert.rejects(dialRegistration(server.path, { timeoutMs: 300 }), (err) => {
    assert.ok(isBerthError(err, 'BERTH_DIAL_FAILED'), String(err));
    assert.match(err.message, /no HTTP\/2 settings from the server/);
    return true;
  });
  assert.equal(server.getInfoCalls, 0);
});

test('a connection dropped before SETTINGS is redialled, and the early call goes again on the new one', async (t) => {
  const server = await serveRaw(t, {
    settingsAfterCall: true,
    onCall: (connection) => (connection === 0 ? 'close' : 'answer'),
  });
  const conn = await dialRegistration(server.path, { timeoutMs: 10_000, getInfoFirstMs: 5_000 });
  t.after(() => conn.close());
  assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), info);
  assert.equal(server.connections, 2);
  assert.equal(server.getInfoCalls, 2, 'one call on each connection, answered once');
});

test("the early call's deadline is getInfo()'s, from when getInfo() is called, not from the dial", async (t) => {
  const server = await serveRaw(t, { settingsAfterCall: false, onCall: () => 'silent' });
  const conn = await dialRegistration(server.path, { timeoutMs: 10_000, getInfoFirstMs: 100 });
  t.after(() => conn.close());
  await waitFor('the early call to reach the server', () => server.getInfoCalls === 1, { timeoutMs: 10_000 });
  // Longer than getInfoFirstMs: had the deadline started with the dial, it would be over. A longer
  // wait here only makes the check stronger; it races nothing.
  await delay(300);
  const began = performance.now();
  await assert.rejects(conn.getInfo({ timeoutMs: 400 }), (err) => {
    assert.ok(isBerthError(err, 'BERTH_GET_INFO_FAILED'), String(err));
    assert.match(err.message, /DEADLINE_EXCEEDED/);
    return true;
  });
  assert.ok(performance.now() - began >= 390, 'the deadline ran from the getInfo() call');
  assert.equal(server.getInfoCalls, 1, 'no second call');
});

test('an answer that came before getInfo() is called is taken at once', async (t) => {
  const server = await serveRaw(t, { settingsAfterCall: true });
  const conn = await dialRegistration(server.path, { timeoutMs: 10_000, getInfoFirstMs: 100 });
  t.after(() => conn.close());
  await waitFor('the early call to reach the server', () => server.getInfoCalls === 1, { timeoutMs: 10_000 });
  await delay(300); // past getInfoFirstMs, which is only the call's grpc-timeout
  assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), info);
  assert.equal(server.getInfoCalls, 1);
});

test('an early call the signal aborts rejects getInfo() with BERTH_ABORTED', async (t) => {
  const server = await serveRaw(t, { settingsAfterCall: false, onCall: () => 'silent' });
  const controller = new AbortController();
  const conn = await dialRegistration(server.path, {
    timeoutMs: 10_000,
    getInfoFirstMs: 60_000,
    signal: controller.signal,
  });
  t.after(() => conn.close());
  const pending = conn.getInfo({ timeoutMs: 60_000, signal: controller.signal });
  await waitFor('the early call to reach the server', () => server.getInfoCalls === 1, { timeoutMs: 10_000 });
  controller.abort();
  await assert.rejects(pending, (err: unknown) => isBerthError(err, 'BERTH_ABORTED'));
});

test('a reply that arrived while the process was busy past the deadline is taken, not refused as late', async (t) => {
  const server = await serveRaw(t, { settingsAfterCall: false, onCall: () => 'hold' });
  const conn = await dialRegistration(server.path, { timeoutMs: 10_000, getInfoFirstMs: 60_000 });
  t.after(() => conn.close());
  await waitFor('the early call to reach the server', () => server.release !== undefined, {
    timeoutMs: 10_000,
  });
  // In an I/O callback, as a storm's work is (the poll phase): the deadline is armed, the reply
  // is written (the server is in this process; a unix socket write lands in the client's buffer
  // at once), and the loop is held past the deadline. In the next turn the expired timer and the
  // readable reply are both there, and timers run before the poll phase reads the reply.
  const { answer } = await new Promise<{ answer: ReturnType<typeof conn.getInfo> }>((resolve) => {
    stat(server.path, () => {
      const pending = conn.getInfo({ timeoutMs: 20 });
      server.release?.();
      const busyUntil = performance.now() + 120;
      while (performance.now() < busyUntil) {
        // the busy turn
      }
      resolve({ answer: pending });
    });
  });
  assert.deepEqual(await answer, info);
});
