/**
 * Rewrites the client-to-server half of an HTTP/2 connection so that Node's
 * HTTP/2 server (nghttp2) accepts the `:authority` real gRPC clients send.
 *
 * grpc-go dials a unix socket path through its passthrough resolver and sends
 * the path as `:authority` (e.g. `/var/lib/kubelet/device-plugins/kubelet.sock`);
 * nghttp2 resets such a stream with PROTOCOL_ERROR before grpc-js sees it
 * (nodejs/node#32326, grpc/grpc-node#258). It resets a stream without any
 * `:authority` (or `host`) the same way. gRPC itself ignores the authority.
 *
 * Every frame passes through untouched except a header block that needs a
 * change:
 * - an `:authority` with characters nghttp2 refuses becomes a value of the
 *   same length made only of allowed ones (each refused octet becomes `_`),
 *   re-emitted as a plain literal with the same indexing kind and the same
 *   name reference. The dynamic table entry keeps its size, so the server's
 *   table and the client's stay in step and later indexed references (which
 *   then name the rewritten value) stay right;
 * - a request without `:authority` or `host` gets `:authority: localhost`
 *   (a literal without indexing, which leaves the table alone).
 * A changed block is sent as HEADERS plus CONTINUATION frames of at most
 * 16 KiB (the smallest SETTINGS_MAX_FRAME_SIZE), keeping END_STREAM and the
 * priority fields and dropping padding.
 *
 * Limitation: an empty `:authority` added to the dynamic table (incremental
 * indexing) cannot be replaced by a same-size valid value, so it is passed on
 * and nghttp2 still refuses that stream. No client we know sends one.
 */
import {
  AUTHORITY_INDEX,
  type DecodedField,
  DynamicTable,
  decodeBlock,
  encodeLiteral,
  HpackError,
} from '../hpack/index.js';
import { DEFAULT_AUTHORITY, MAX_DYNAMIC_TABLE_BYTES, MAX_HEADER_BLOCK_BYTES } from './unix-grpc-options.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME_HEADER_BYTES = 9;
const TYPE_HEADERS = 0x1;
const TYPE_CONTINUATION = 0x9;
const FLAG_END_STREAM = 0x1;
const FLAG_END_HEADERS = 0x4;
const FLAG_PADDED = 0x8;
const FLAG_PRIORITY = 0x20;
const PRIORITY_BYTES = 5;
/** The smallest SETTINGS_MAX_FRAME_SIZE a peer may advertise; always safe to send. */
const MAX_FRAME_PAYLOAD = 16_384;

/** Octets nghttp2 accepts in `:authority`: RFC 3986 unreserved, sub-delims, ':', '@', '[', ']', '%'. */
const AUTHORITY_OK = new Uint8Array(256);
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@[]%") {
  AUTHORITY_OK[c.charCodeAt(0)] = 1;
}
const AUTHORITY_FILL = '_';

export class H2RewriteError extends Error {}

export function isAcceptedAuthority(value: string): boolean {
  if (value.length === 0) return false;
  for (let i = 0; i < value.length; i++) if (AUTHORITY_OK[value.charCodeAt(i)] !== 1) return false;
  return true;
}

/** The same number of octets, each one nghttp2 refuses replaced by `_`. */
export function sameLengthAuthority(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    out += AUTHORITY_OK[value.charCodeAt(i)] === 1 ? value[i] : AUTHORITY_FILL;
  }
  return out;
}

export interface RewriterOptions {
  maxHeaderBlockBytes?: number;
}

interface PendingBlock {
  streamId: number;
  flags: number;
  priority: Buffer | undefined;
  frames: Buffer[];
  fragments: Buffer[];
  bytes: number;
}

type State =
  | { kind: 'preface'; matched: number }
  | { kind: 'frame-header' }
  | { kind: 'pass'; remaining: number }
  | { kind: 'header-payload'; header: Buffer; remaining: number; parts: Buffer[] };

export class H2RequestRewriter {
  readonly #maxBlock: number;
  readonly #table = new DynamicTable();
  #state: State = { kind: 'preface', matched: 0 };
  #headerBytes = Buffer.alloc(FRAME_HEADER_BYTES);
  #headerFill = 0;
  #block: PendingBlock | undefined;
  #lastRequestStream = 0;
  /** Header blocks changed so far (for tests and logs). */
  rewritten = 0;

  constructor(options: RewriterOptions = {}) {
    this.#maxBlock = options.maxHeaderBlockBytes ?? MAX_HEADER_BLOCK_BYTES;
  }

  /**
   * Takes the next bytes from the client; returns what to hand to the
   * server (possibly nothing yet). Throws H2RewriteError when the bytes are
   * not HTTP/2 we can follow; the connection must then be closed.
   */
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let pos = 0;
    while (pos < chunk.length) {
      const state = this.#state;
      switch (state.kind) {
        case 'preface': {
          const take = Math.min(PREFACE.length - state.matched, chunk.length - pos);
          if (
            !chunk.subarray(pos, pos + take).equals(PREFACE.subarray(state.matched, state.matched + take))
          ) {
            throw new H2RewriteError('the client did not send the HTTP/2 connection preface');
          }
          out.push(chunk.subarray(pos, pos + take));
          pos += take;
          state.matched += take;
          if (state.matched === PREFACE.length) this.#state = { kind: 'frame-header' };
          break;
        }
        case 'frame-header': {
          const take = Math.min(FRAME_HEADER_BYTES - this.#headerFill, chunk.length - pos);
          chunk.copy(this.#headerBytes, this.#headerFill, pos, pos + take);
          this.#headerFill += take;
          pos += take;
          if (this.#headerFill === FRAME_HEADER_BYTES) {
            this.#headerFill = 0;
            const header = this.#headerBytes;
            this.#headerBytes = Buffer.alloc(FRAME_HEADER_BYTES);
            this.#onFrameHeader(header, out);
          }
          break;
        }
        case 'pass': {
          const take = Math.min(state.remaining, chunk.length - pos);
          out.push(chunk.subarray(pos, pos + take));
          pos += take;
          state.remaining -= take;
          if (state.remaining === 0) this.#state = { kind: 'frame-header' };
          break;
        }
        case 'header-payload': {
          const take = Math.min(state.remaining, chunk.length - pos);
          state.parts.push(chunk.subarray(pos, pos + take));
          pos += take;
          state.remaining -= take;
          if (state.remaining === 0) {
            this.#state = { kind: 'frame-header' };
            this.#onHeaderFrame(state.header, Buffer.concat(state.parts), out);
          }
          break;
        }
      }
    }
    return out;
  }

  #onFrameHeader(header: Buffer, out: Buffer[]): void {
    const length = header.readUIntBE(0, 3);
    const type = header[3] ?? 0;
    if (this.#block !== undefined && type !== TYPE_CONTINUATION) {
      throw new H2RewriteError(`a frame of type ${type} interrupts a header block (RFC 9113 section 6.10)`);
    }
    if (type === TYPE_HEADERS || type === TYPE_CONTINUATION) {
      const buffered = (this.#block?.bytes ?? 0) + FRAME_HEADER_BYTES + length;
      if (buffered > this.#maxBlock) {
        throw new H2RewriteError(`a header block exceeds ${this.#maxBlock} bytes`);
      }
      this.#state = { kind: 'header-payload', header, remaining: length, parts: [] };
      if (length === 0) {
        this.#state = { kind: 'frame-header' };
        this.#onHeaderFrame(header, Buffer.alloc(0), out);
      }
      return;
    }
    out.push(header);
    if (length > 0) this.#state = { kind: 'pass', remaining: length };
  }

  #onHeaderFrame(header: Buffer, payload: Buffer, out: Buffer[]): void {
    const type = header[3] ?? 0;
    const flags = header[4] ?? 0;
    const streamId = header.readUInt32BE(5) & 0x7fff_ffff;
    const frame = Buffer.concat([header, payload]);
    if (type === TYPE_CONTINUATION) {
      const block = this.#block;
      if (block === undefined) throw new H2RewriteError('CONTINUATION frame without a header block');
      if (block.streamId !== streamId) {
        throw new H2RewriteError(
          `CONTINUATION for stream ${streamId} inside a block of stream ${block.streamId}`,
        );
      }
      block.frames.push(frame);
      block.fragments.push(payload);
      block.bytes += frame.length;
    } else {
      let start = 0;
      let end = payload.length;
      if (flags & FLAG_PADDED) {
        const padding = payload[0];
        start = 1;
        if (padding === undefined || padding > end - start) {
          throw new H2RewriteError('HEADERS padding is longer than the frame');
        }
        end -= padding;
      }
      let priority: Buffer | undefined;
      if (flags & FLAG_PRIORITY) {
        if (end - start < PRIORITY_BYTES)
          throw new H2RewriteError('HEADERS frame too short for its priority');
        priority = payload.subarray(start, start + PRIORITY_BYTES);
        start += PRIORITY_BYTES;
      }
      this.#block = {
        streamId,
        flags,
        priority,
        frames: [frame],
        fragments: [payload.subarray(start, end)],
        bytes: frame.length,
      };
    }
    if (flags & FLAG_END_HEADERS) {
      const block = this.#block;
      this.#block = undefined;
      if (block !== undefined) out.push(...this.#finishBlock(block));
    }
  }

  #finishBlock(block: PendingBlock): Buffer[] {
    const bytes =
      block.fragments.length === 1 ? (block.fragments[0] as Buffer) : Buffer.concat(block.fragments);
    let fields: DecodedField[];
    try {
      fields = decodeBlock(bytes, this.#table, MAX_DYNAMIC_TABLE_BYTES, serverTableValue);
    } catch (err) {
      if (err instanceof HpackError) throw new H2RewriteError(`bad header block: ${err.message}`);
      throw err;
    }
    // Client stream ids only grow: a higher one opens a request, a known one carries trailers.
    const isRequest = block.streamId > this.#lastRequestStream;
    if (isRequest) this.#lastRequestStream = block.streamId;
    const rewritten = rewriteFields(bytes, fields, isRequest);
    if (rewritten === undefined) return block.frames;
    this.rewritten += 1;
    return framesFor(block, rewritten);
  }
}

/**
 * What the server's dynamic table holds for an added entry: a rewritten
 * authority has the client's length, so both tables evict alike, and later
 * indexed references name the value the server saw.
 */
function serverTableValue(name: string, value: string): string {
  return name === ':authority' && value !== '' && !isAcceptedAuthority(value)
    ? sameLengthAuthority(value)
    : value;
}

/** The block with its `:authority` made acceptable, or undefined when it is fine as it is. */
function rewriteFields(bytes: Buffer, fields: DecodedField[], isRequest: boolean): Buffer | undefined {
  let hasAuthority = false;
  let isRequestBlock = false;
  const parts: Buffer[] = [];
  let copiedTo = 0;
  let insertAt = 0;
  let changed = false;
  for (const field of fields) {
    if (field.representation === 'size-update') {
      insertAt = field.end;
      continue;
    }
    if (field.name.startsWith(':')) isRequestBlock = true;
    if (field.name === 'host') hasAuthority = true;
    if (field.name !== ':authority') continue;
    hasAuthority = true;
    if (isAcceptedAuthority(field.value)) continue;
    let replacement: Buffer;
    if (field.representation === 'indexed') {
      // An indexed field leaves the table alone, so any literal may stand in for it.
      replacement = encodeLiteral(
        'without-indexing',
        AUTHORITY_INDEX,
        ':authority',
        field.value === '' ? DEFAULT_AUTHORITY : sameLengthAuthority(field.value),
      );
    } else if (field.value === '') {
      if (field.representation === 'incremental') continue; // the documented limitation
      replacement = encodeLiteral(field.representation, field.nameIndex, field.name, DEFAULT_AUTHORITY);
    } else {
      const value = sameLengthAuthority(field.value);
      replacement = encodeLiteral(field.representation, field.nameIndex, field.name, value);
    }
    parts.push(bytes.subarray(copiedTo, field.start), replacement);
    copiedTo = field.end;
    changed = true;
  }
  const insert = isRequest && isRequestBlock && !hasAuthority;
  if (!changed && !insert) return undefined;
  parts.push(bytes.subarray(copiedTo));
  const block = Buffer.concat(parts);
  if (!insert) return block;
  // After any leading size updates; the literal without indexing leaves the table alone.
  const authority = encodeLiteral('without-indexing', AUTHORITY_INDEX, ':authority', DEFAULT_AUTHORITY);
  return Buffer.concat([block.subarray(0, insertAt), authority, block.subarray(insertAt)]);
}

function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUIntBE(length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return header;
}

function framesFor(block: PendingBlock, bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  const first = block.priority === undefined ? bytes : Buffer.concat([block.priority, bytes]);
  let offset = 0;
  let type = TYPE_HEADERS;
  while (true) {
    const take = Math.min(MAX_FRAME_PAYLOAD, first.length - offset);
    const last = offset + take === first.length;
    let flags = last ? FLAG_END_HEADERS : 0;
    if (type === TYPE_HEADERS) flags |= block.flags & (FLAG_END_STREAM | FLAG_PRIORITY);
    out.push(frameHeader(take, type, flags, block.streamId), first.subarray(offset, offset + take));
    offset += take;
    type = TYPE_CONTINUATION;
    if (last) return out;
  }
}
