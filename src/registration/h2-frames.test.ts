import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DynamicTable, decodeBlock } from '../hpack/index.js';
import {
  Flag,
  FrameType,
  frame,
  MAX_FRAME_BYTES,
  requestHeaderBlock,
  unaryRequestFrames,
} from './h2-frames.js';

const GET_INFO = '/pluginregistration.Registration/GetInfo';

/** The frames in `bytes`, read by their 9-byte headers. */
function frames(bytes: Buffer): { type: number; flags: number; streamId: number; payload: Buffer }[] {
  const out = [];
  for (let at = 0; at < bytes.length; ) {
    const length = bytes.readUIntBE(at, 3);
    out.push({
      type: bytes[at + 3] as number,
      flags: bytes[at + 4] as number,
      streamId: bytes.readUInt32BE(at + 5),
      payload: bytes.subarray(at + 9, at + 9 + length),
    });
    at += 9 + length;
  }
  return out;
}

function lengthPrefixed(message: Uint8Array): Buffer {
  const body = Buffer.alloc(5 + message.byteLength);
  body.writeUInt32BE(message.byteLength, 1);
  body.set(message, 5);
  return body;
}

test("a unary request's headers decode to gRPC's request headers, and the block is built once per path and deadline", () => {
  const block = requestHeaderBlock(GET_INFO, '1000m');
  const fields = decodeBlock(block, new DynamicTable(), 4096).map((f) =>
    f.representation === 'size-update' ? [] : [f.name, f.value],
  );
  assert.deepEqual(fields, [
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', GET_INFO],
    [':authority', 'localhost'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ['grpc-timeout', '1000m'],
  ]);
  assert.equal(requestHeaderBlock(GET_INFO, '1000m'), block, 'the same buffer again');
  assert.notDeepEqual(requestHeaderBlock(GET_INFO, '999m'), block);
  // Past the memo's bound, blocks are still right (built each time).
  for (let ms = 1; ms <= 100; ms++) {
    const other = requestHeaderBlock('/x.Y/Z', `${ms}m`);
    const timeout = decodeBlock(other, new DynamicTable(), 4096).at(-1);
    assert.equal(timeout?.representation === 'size-update' ? undefined : timeout?.value, `${ms}m`);
  }
});

test('a small request is one HEADERS and one DATA frame, byte for byte as built frame by frame', () => {
  const block = requestHeaderBlock(GET_INFO, '1000m');
  for (const message of [
    new Uint8Array(0),
    Uint8Array.from([0x08, 0x01]),
    new Uint8Array(MAX_FRAME_BYTES - 5),
  ]) {
    const expected = Buffer.concat([
      frame(FrameType.HEADERS, Flag.END_HEADERS, 7, block),
      frame(FrameType.DATA, Flag.END_STREAM, 7, lengthPrefixed(message)),
    ]);
    assert.deepEqual(unaryRequestFrames(7, block, message), expected, `${message.byteLength} bytes`);
  }
});

test('a request larger than a frame is split into DATA frames of at most 16 KiB, the last ending the stream', () => {
  const block = requestHeaderBlock(GET_INFO, '1000m');
  const message = Buffer.alloc(40_000);
  for (let i = 0; i < message.length; i++) message[i] = i % 251;
  const parts = frames(unaryRequestFrames(3, block, message));
  assert.equal(parts[0]?.type, FrameType.HEADERS);
  assert.deepEqual(parts[0]?.payload, block);
  const data = parts.slice(1);
  assert.equal(data.length, 3);
  for (const [i, part] of data.entries()) {
    assert.equal(part.type, FrameType.DATA);
    assert.equal(part.streamId, 3);
    assert.ok(part.payload.length <= MAX_FRAME_BYTES);
    assert.equal(part.flags, i === data.length - 1 ? Flag.END_STREAM : 0);
  }
  assert.deepEqual(Buffer.concat(data.map((part) => part.payload)), lengthPrefixed(message));
});
