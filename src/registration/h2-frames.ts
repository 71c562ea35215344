/**
 * HTTP/2 framing (RFC 9113 §4, §6) for berth's registration client: the
 * frame types and flags it reads and writes, the frames it sends, and the
 * request header block of a gRPC unary call. The header block is plain HPACK
 * literals without indexing (RFC 7541 §6.2.2), so the client keeps no encoder
 * table and every request is built from bytes computed once per method.
 */
import { encodeInteger, encodeLiteral } from '../hpack/index.js';

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

/** RST_STREAM and GOAWAY error codes (RFC 9113 §7) that the client sends or maps. */
export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
} as const;

/** The largest frame a peer may send us: we never raise SETTINGS_MAX_FRAME_SIZE (RFC 9113 §4.2). */
export const MAX_FRAME_BYTES = 16_384;
/**
 * The flow-control window we give each stream and the connection. A GetInfo
 * reply may be 64 KiB (PLUGIN_INFO_LIMITS), more than the default 65,535, so
 * we grant 1 MiB once and never have to send a WINDOW_UPDATE per frame.
 */
export const RECEIVE_WINDOW_BYTES = 1 << 20;
const DEFAULT_WINDOW_BYTES = 65_535;

export function frame(type: number, flags: number, streamId: number, payload?: Uint8Array): Buffer {
  const length = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(9 + length);
  writeFrameHeader(out, 0, length, type, flags, streamId);
  if (payload !== undefined) out.set(payload, 9);
  return out;
}

/** A frame's 9-byte header at `at`: payload length, type, flags, stream id. */
function writeFrameHeader(
  out: Buffer,
  at: number,
  length: number,
  type: number,
  flags: number,
  streamId: number,
): void {
  out.writeUIntBE(length, at, 3);
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(streamId & 0x7fff_ffff, at + 5);
}

function settingsPayload(settings: ReadonlyArray<readonly [number, number]>): Buffer {
  const out = Buffer.alloc(6 * settings.length);
  settings.forEach(([id, value], i) => {
    out.writeUInt16BE(id, 6 * i);
    out.writeUInt32BE(value, 6 * i + 2);
  });
  return out;
}

function windowUpdatePayload(increment: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(increment, 0);
  return out;
}

/** The client connection preface (RFC 9113 §3.4). */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const SETTINGS_ENABLE_PUSH = 0x2;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;
/** The largest decoded header list we accept (and say so); a block past it closes the connection. */
export const MAX_HEADER_LIST_BYTES = 64 * 1024;

/**
 * What the client sends first, in one write: the preface, its SETTINGS (no
 * push, a 1 MiB stream window, the header list bound) and a connection
 * WINDOW_UPDATE up to the same 1 MiB.
 */
export const CLIENT_HELLO = Buffer.concat([
  PREFACE,
  frame(
    FrameType.SETTINGS,
    0,
    0,
    settingsPayload([
      [SETTINGS_ENABLE_PUSH, 0],
      [SETTINGS_INITIAL_WINDOW_SIZE, RECEIVE_WINDOW_BYTES],
      [SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST_BYTES],
    ]),
  ),
  frame(FrameType.WINDOW_UPDATE, 0, 0, windowUpdatePayload(RECEIVE_WINDOW_BYTES - DEFAULT_WINDOW_BYTES)),
]);

export const SETTINGS_ACK = frame(FrameType.SETTINGS, Flag.ACK, 0);

/** A connection-level WINDOW_UPDATE giving back `bytes` of DATA we consumed. */
export function connectionWindowUpdate(bytes: number): Buffer {
  return frame(FrameType.WINDOW_UPDATE, 0, 0, windowUpdatePayload(bytes));
}

export function rstStream(streamId: number, code: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code, 0);
  return frame(FrameType.RST_STREAM, 0, streamId, payload);
}

export function goaway(lastStreamId: number, code: number): Buffer {
  const payload = Buffer.alloc(8);
  payload.writeUInt32BE(lastStreamId, 0);
  payload.writeUInt32BE(code, 4);
  return frame(FrameType.GOAWAY, 0, 0, payload);
}

/** HPACK static-table indexes (RFC 7541 Appendix A) used by the request block. */
const METHOD_POST = 3;
const SCHEME_HTTP = 6;
const PATH = 4;
const AUTHORITY = 1;
const CONTENT_TYPE = 31;

/**
 * Per method path, then per deadline (the handshake's deadlines are fixed):
 * the request block. Two levels, so a lookup builds no key string.
 */
const requestBlocks = new Map<string, Map<string, Buffer>>();
let requestBlockCount = 0;

/**
 * The HEADERS block of a gRPC unary request: POST, http, the method's path,
 * `localhost` as authority (a unix socket has no host; every stack accepts
 * it), the gRPC content type, `te: trailers` and the deadline.
 */
export function requestHeaderBlock(path: string, grpcTimeout: string): Buffer {
  let byTimeout = requestBlocks.get(path);
  let block = byTimeout?.get(grpcTimeout);
  if (block === undefined) {
    block = Buffer.concat([
      Buffer.from(encodeInteger(METHOD_POST, 7, 0x80)),
      Buffer.from(encodeInteger(SCHEME_HTTP, 7, 0x80)),
      encodeLiteral('without-indexing', PATH, '', path),
      encodeLiteral('without-indexing', AUTHORITY, '', 'localhost'),
      encodeLiteral('without-indexing', CONTENT_TYPE, '', 'application/grpc'),
      encodeLiteral('without-indexing', 0, 'te', 'trailers'),
      encodeLiteral('without-indexing', 0, 'grpc-timeout', grpcTimeout),
    ]);
    // The registration client calls a handful of methods with fixed
    // deadlines; other callers must not grow this without bound.
    if (requestBlockCount < 64) {
      if (byTimeout === undefined) {
        byTimeout = new Map();
        requestBlocks.set(path, byTimeout);
      }
      byTimeout.set(grpcTimeout, block);
      requestBlockCount += 1;
    }
  }
  return block;
}

/** The frames of one unary request: HEADERS, then the length-prefixed message in DATA frames, the last ending the stream. */
export function unaryRequestFrames(streamId: number, block: Buffer, message: Uint8Array): Buffer {
  // Every handshake request fits one DATA frame: built in one buffer, without a copy per frame.
  if (5 + message.byteLength <= MAX_FRAME_BYTES && block.length <= MAX_FRAME_BYTES) {
    const out = Buffer.allocUnsafe(9 + block.length + 9 + 5 + message.byteLength);
    writeFrameHeader(out, 0, block.length, FrameType.HEADERS, Flag.END_HEADERS, streamId);
    block.copy(out, 9);
    const data = 9 + block.length;
    writeFrameHeader(out, data, 5 + message.byteLength, FrameType.DATA, Flag.END_STREAM, streamId);
    out[data + 9] = 0;
    out.writeUInt32BE(message.byteLength, data + 10);
    out.set(message, data + 14);
    return out;
  }
  const body = Buffer.allocUnsafe(5 + message.byteLength);
  body[0] = 0;
  body.writeUInt32BE(message.byteLength, 1);
  body.set(message, 5);
  const frames: Buffer[] = [frame(FrameType.HEADERS, Flag.END_HEADERS, streamId, block)];
  for (let at = 0; at < body.length || at === 0; at += MAX_FRAME_BYTES) {
    const end = Math.min(body.length, at + MAX_FRAME_BYTES);
    frames.push(
      frame(FrameType.DATA, end === body.length ? Flag.END_STREAM : 0, streamId, body.subarray(at, end)),
    );
  }
  return Buffer.concat(frames);
}
