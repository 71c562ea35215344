/**
 * One client HTTP/2 connection on a unix socket, written against its bytes
 * (pipe-stream.ts): the registration handshake's unary calls, then (handed over) the
 * liveness prober's idle connection with its probes (PINGs, and every third
 * a health-check call: see sendPing).
 *
 * Why not node:http2: a Http2Session, its streams and their Readable and
 * Writable machinery were about a third of berth's CPU per registration in a
 * storm of 1,000 Go plugins (issue 20), and liveness then opened a second
 * connection and session per plugin. A unary call needs little of HTTP/2:
 * one HEADERS and one DATA out; HEADERS (HPACK-decoded, so the decoder's
 * dynamic table stays in step with the server's encoder), DATA and trailers
 * in; SETTINGS, PING, GOAWAY, RST_STREAM and CONTINUATION handled as RFC 9113
 * says. Flow control: we grant 1 MiB up front (h2-frames.ts) and return the
 * connection window as it is consumed; our requests are far below the
 * server's initial window.
 */
import { DynamicTable, decodeBlock, HpackError } from '../hpack/index.js';
import {
  CLIENT_HELLO,
  connectionWindowUpdate,
  ErrorCode,
  Flag,
  FrameType,
  frame,
  goaway,
  MAX_FRAME_BYTES,
  MAX_HEADER_LIST_BYTES,
  RECEIVE_WINDOW_BYTES,
  requestHeaderBlock,
  rstStream,
  SETTINGS_ACK,
  unaryRequestFrames,
} from './h2-frames.js';
import { connectPipeStream, type PipeStream } from './pipe-stream.js';

export type HeaderMap = Record<string, string>;

/** How one stream ended, for the unary call to judge. */
export interface StreamEnd {
  headers: HeaderMap | undefined;
  trailers: HeaderMap | undefined;
  body: Buffer[];
  /** Set when the server reset the stream. */
  rstCode?: number;
  /** Why the connection failed under the stream (closed, GOAWAY past it, a protocol error). */
  connectionError?: string;
}

/** The receiving side of one open stream. */
export interface StreamSink {
  /** Each DATA frame's payload as it arrives (to refuse an oversized reply early). */
  data(chunk: Buffer): void;
  end(result: StreamEnd): void;
}

interface OpenStream {
  sink: StreamSink;
  headers: HeaderMap | undefined;
  trailers: HeaderMap | undefined;
  body: Buffer[];
}

/**
 * Every keepalive PING carries the same payload: a connection has at most one
 * ping outstanding, so the ACK needs no per-ping key, and the frame is built
 * once for all connections.
 */
const PING_PAYLOAD = Buffer.from('berth-lv', 'latin1');
const PING_FRAME = frame(FrameType.PING, 0, 0, PING_PAYLOAD);
/** The liveness probe's call (sendPing): the standard gRPC health check, overall status. */
const HEALTH_CHECK_PATH = '/grpc.health.v1.Health/Check';
const HEALTH_CHECK_TIMEOUT = '10S';
const EMPTY = new Uint8Array(0);
/** Return the connection window once this much DATA has been consumed. */
const WINDOW_RETURN_BYTES = RECEIVE_WINDOW_BYTES / 2;

export class H2Connection {
  readonly #socket: PipeStream;
  #pending: Buffer | undefined;
  /** The HPACK decoder's table (at most 4 KiB: we never allow a larger one). */
  readonly #table = new DynamicTable();
  readonly #streams = new Map<number, OpenStream>();
  #nextStreamId = 1;
  /** A header block split over CONTINUATION frames. */
  #block: { streamId: number; endStream: boolean; parts: Buffer[]; bytes: number } | undefined;
  #unreturned = 0;
  #settingsSeen = false;
  #onSettings: (() => void) | undefined;
  #goingAway = false;
  #closed = false;
  #closedByPeer = false;
  #onPeerClose: (() => void) | undefined;
  /** A probe (PING or health check) was sent and has not been answered yet. */
  #awaiting = false;
  /** Probes sent: every third is a call (sendPing says why). */
  #probes = 0;
  /** Kept for liveness: no calls from outside (openStream refuses). */
  #held = false;
  readonly #pingWaiters = new Set<(error: string | undefined) => void>();

  /**
   * Takes over a connected socket and sends the preface. `onSettings` runs
   * once, when the server's first SETTINGS frame arrives (proof that an
   * HTTP/2 server is there).
   */
  constructor(socket: PipeStream, onSettings?: () => void) {
    this.#socket = socket;
    this.#onSettings = onSettings;
    socket.setReader((chunk) => this.#read(chunk));
    socket.onClose(() => this.#lost('the connection closed'));
    socket.write(CLIENT_HELLO);
  }

  /** Connects to `socketPath` and starts HTTP/2 without waiting for anything (liveness's own connections). */
  static connectIdle(socketPath: string): H2Connection {
    // A failed connect closes the stream, and the connection is lost with it.
    const socket = connectPipeStream(socketPath, ignoreConnectResult);
    socket.unref();
    const connection = new H2Connection(socket);
    connection.#held = true;
    return connection;
  }

  /** No new stream can start: closed, or the server sent GOAWAY. */
  get closed(): boolean {
    return this.#closed || this.#goingAway;
  }

  /**
   * Opens a stream and writes its frames (built by the caller for the stream
   * id given). Returns the stream id, or undefined when the connection can
   * take no new stream.
   */
  openStream(build: (streamId: number) => Buffer, sink: StreamSink): number | undefined {
    if (this.#held) return undefined;
    return this.#open(build, sink);
  }

  #open(build: (streamId: number) => Buffer, sink: StreamSink): number | undefined {
    if (this.closed || this.#nextStreamId > 0x7fff_ffff) return undefined;
    const id = this.#nextStreamId;
    this.#nextStreamId += 2;
    this.#streams.set(id, { sink, headers: undefined, trailers: undefined, body: [] });
    this.#socket.write(build(id));
    return id;
  }

  /** Resets a stream we no longer want (its later frames are read and dropped). */
  cancelStream(streamId: number): void {
    if (!this.#streams.delete(streamId)) return;
    if (!this.#closed) this.#socket.write(rstStream(streamId, ErrorCode.CANCEL));
    this.#closeIfDone();
  }

  /**
   * Keeps the connection for liveness only: no more calls from outside, and
   * it no longer holds the process open. Returns false when it is closed.
   */
  holdIdle(): boolean {
    if (this.#closed) return false;
    for (const id of [...this.#streams.keys()]) this.cancelStream(id);
    this.#held = true;
    this.#socket.unref();
    return true;
  }

  /** `callback` runs once when the peer closes or resets the connection or sends GOAWAY (at once if it already did). */
  onPeerClose(callback: () => void): void {
    this.#onPeerClose = callback;
    if (this.#closedByPeer) queueMicrotask(callback);
  }

  /**
   * Sends one liveness probe, unless one is outstanding; `answered` turns
   * true when it is answered. A probe is a PING, except every third: grpc-go
   * servers close a connection that gets three PINGs with no call in between
   * (their default keepalive enforcement: GOAWAY "too_many_pings"), and any
   * call resets that count. That call is the standard health check,
   * `grpc.health.v1.Health/Check`; whatever the answer (most plugins do not
   * serve it: UNIMPLEMENTED, from the server's own dispatch), it proves the
   * process is answering.
   */
  sendPing(): void {
    if (this.#closed || this.#awaiting) return;
    this.#awaiting = true;
    this.#probes += 1;
    if (this.#probes % 3 !== 0) {
      this.#socket.write(PING_FRAME);
      return;
    }
    const block = requestHeaderBlock(HEALTH_CHECK_PATH, HEALTH_CHECK_TIMEOUT);
    const opened = this.#open((id) => unaryRequestFrames(id, block, EMPTY), {
      data: () => {},
      end: (end) => {
        if (end.connectionError === undefined) this.#answer();
      },
    });
    if (opened === undefined) this.#socket.write(PING_FRAME);
  }

  #answer(): void {
    this.#awaiting = false;
    for (const finish of [...this.#pingWaiters]) finish(undefined);
  }

  /** No PING is outstanding: the last one sent was answered (or none was sent). */
  get answered(): boolean {
    return !this.#awaiting && !this.#closed;
  }

  /** One PING answered within `timeoutMs`: undefined, or why not. */
  ping(timeoutMs: number): Promise<string | undefined> {
    if (this.#closed) return Promise.resolve('the connection is closed');
    this.sendPing();
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => finish(`no answer to a keepalive ping within ${timeoutMs} ms`),
        timeoutMs,
      );
      const finish = (error: string | undefined) => {
        clearTimeout(timer);
        this.#pingWaiters.delete(finish);
        resolve(error);
      };
      this.#pingWaiters.add(finish);
    });
  }

  /** Says goodbye (GOAWAY) and closes once the bytes are out; open streams fail. */
  close(): void {
    if (this.#closed) return;
    this.#socket.write(goaway(0, ErrorCode.NO_ERROR));
    this.#shut('the connection was closed by berth', false);
    this.#socket.end();
  }

  destroy(): void {
    if (this.#closed) return;
    this.#shut('the connection was closed by berth', false);
    this.#socket.destroy();
  }

  #lost(why: string): void {
    if (this.#closed) return;
    this.#shut(why, true);
    this.#socket.destroy();
  }

  /** Fails a protocol-violating peer's connection: GOAWAY with the code, then close. */
  #fail(why: string, code: number = ErrorCode.PROTOCOL_ERROR): void {
    if (this.#closed) return;
    this.#socket.write(goaway(0, code));
    this.#shut(`the connection failed: ${why}`, true);
    this.#socket.end();
  }

  #shut(why: string, byPeer: boolean): void {
    this.#closed = true;
    this.#pending = undefined;
    this.#block = undefined;
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    for (const stream of streams) stream.sink.end({ ...stream, connectionError: why });
    for (const finish of [...this.#pingWaiters]) finish('the connection closed');
    if (byPeer) this.#peerClosed();
  }

  #peerClosed(): void {
    if (this.#closedByPeer) return;
    this.#closedByPeer = true;
    this.#onPeerClose?.();
  }

  #closeIfDone(): void {
    if (this.#goingAway && this.#streams.size === 0) this.#lost('the server sent GOAWAY');
  }

  /**
   * One read's frames. The replies they call for (SETTINGS and PING
   * acknowledgements, a window update) leave in one write: grpc-go sends its
   * SETTINGS, a PING and a whole reply in one chunk, and each write is a
   * system call here and a wake-up of the plugin.
   */
  #read(chunk: Buffer): void {
    this.#socket.cork();
    try {
      this.#readFrames(chunk);
    } finally {
      this.#socket.uncork();
    }
  }

  #readFrames(chunk: Buffer): void {
    let buffer = this.#pending === undefined ? chunk : Buffer.concat([this.#pending, chunk]);
    this.#pending = undefined;
    let at = 0;
    while (!this.#closed && buffer.length - at >= 9) {
      const length = buffer.readUIntBE(at, 3);
      if (length > MAX_FRAME_BYTES) {
        this.#fail(`a frame of ${length} bytes, larger than the ${MAX_FRAME_BYTES} we allow`, 0x6);
        return;
      }
      if (buffer.length - at < 9 + length) break;
      const type = buffer[at + 3] as number;
      const flags = buffer[at + 4] as number;
      const streamId = buffer.readUInt32BE(at + 5) & 0x7fff_ffff;
      const payload = buffer.subarray(at + 9, at + 9 + length);
      at += 9 + length;
      this.#frame(type, flags, streamId, payload);
    }
    if (!this.#closed && at < buffer.length) {
      // Keep only the partial frame, copied so the chunk it came in can be freed.
      buffer = buffer.subarray(at);
      this.#pending = Buffer.from(buffer);
    }
  }

  #frame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.#block !== undefined && type !== FrameType.CONTINUATION) {
      this.#fail('a header block was interrupted by another frame');
      return;
    }
    switch (type) {
      case FrameType.DATA:
        this.#data(flags, streamId, payload);
        return;
      case FrameType.HEADERS:
        this.#headers(flags, streamId, payload);
        return;
      case FrameType.CONTINUATION:
        this.#continuation(flags, streamId, payload);
        return;
      case FrameType.RST_STREAM:
        this.#reset(streamId, payload);
        return;
      case FrameType.SETTINGS:
        this.#settings(flags, streamId, payload);
        return;
      case FrameType.PING:
        this.#ping(flags, payload);
        return;
      case FrameType.GOAWAY:
        this.#goaway(payload);
        return;
      case FrameType.PUSH_PROMISE:
        this.#fail('PUSH_PROMISE although push is disabled');
        return;
      default:
        // WINDOW_UPDATE (our requests are far below any window), PRIORITY and unknown types.
        return;
    }
  }

  #data(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) {
      this.#fail('DATA on stream 0');
      return;
    }
    this.#unreturned += payload.length;
    if (this.#unreturned >= WINDOW_RETURN_BYTES) {
      this.#socket.write(connectionWindowUpdate(this.#unreturned));
      this.#unreturned = 0;
    }
    const body = unpad(flags, payload, 0);
    if (body === undefined) {
      this.#fail('DATA with more padding than payload');
      return;
    }
    const stream = this.#streams.get(streamId);
    if (stream === undefined) return;
    if (body.length > 0) {
      // Copied out of the shared read buffer (pipe-stream.ts): the stream keeps it.
      const kept = Buffer.from(body);
      stream.body.push(kept);
      stream.sink.data(kept);
    }
    if (flags & Flag.END_STREAM) this.#endStream(streamId);
  }

  #headers(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) {
      this.#fail('HEADERS on stream 0');
      return;
    }
    const fragment = unpad(flags, payload, flags & Flag.PRIORITY ? 5 : 0);
    if (fragment === undefined) {
      this.#fail('HEADERS with more padding than payload');
      return;
    }
    const endStream = (flags & Flag.END_STREAM) !== 0;
    if (flags & Flag.END_HEADERS) {
      this.#headerBlock(streamId, endStream, fragment);
      return;
    }
    this.#block = { streamId, endStream, parts: [Buffer.from(fragment)], bytes: fragment.length };
  }

  #continuation(flags: number, streamId: number, payload: Buffer): void {
    const block = this.#block;
    if (block === undefined || block.streamId !== streamId) {
      this.#fail('CONTINUATION without the HEADERS it continues');
      return;
    }
    block.bytes += payload.length;
    if (block.bytes > MAX_HEADER_LIST_BYTES) {
      this.#fail(`a header block over ${MAX_HEADER_LIST_BYTES} bytes`, ErrorCode.ENHANCE_YOUR_CALM);
      return;
    }
    block.parts.push(Buffer.from(payload));
    if ((flags & Flag.END_HEADERS) === 0) return;
    this.#block = undefined;
    this.#headerBlock(streamId, block.endStream, Buffer.concat(block.parts));
  }

  #headerBlock(streamId: number, endStream: boolean, block: Buffer): void {
    // Decoded even for a stream we reset: the table must follow the server's encoder.
    let fields: HeaderMap;
    try {
      fields = toHeaderMap(decodeBlock(block, this.#table, 4096));
    } catch (err) {
      if (err instanceof HpackError) {
        this.#fail(`an undecodable header block (${err.message})`, 0x9);
        return;
      }
      throw err;
    }
    const stream = this.#streams.get(streamId);
    if (stream !== undefined) {
      if (stream.headers === undefined) stream.headers = fields;
      else if (endStream) stream.trailers = fields;
      else {
        this.#failStream(streamId, 'a second HEADERS block that does not end the stream');
        return;
      }
    }
    if (endStream) this.#endStream(streamId);
  }

  #failStream(streamId: number, why: string): void {
    const stream = this.#streams.get(streamId);
    this.cancelStream(streamId);
    stream?.sink.end({ ...stream, connectionError: `the server broke the stream: ${why}` });
  }

  #endStream(streamId: number): void {
    const stream = this.#streams.get(streamId);
    if (stream === undefined) return;
    this.#streams.delete(streamId);
    stream.sink.end(stream);
    this.#closeIfDone();
  }

  #reset(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) {
      this.#fail('RST_STREAM whose payload is not 4 bytes', 0x6);
      return;
    }
    const stream = this.#streams.get(streamId);
    if (stream === undefined) return;
    this.#streams.delete(streamId);
    stream.sink.end({ ...stream, rstCode: payload.readUInt32BE(0) });
    this.#closeIfDone();
  }

  #settings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) {
      this.#fail('SETTINGS on a stream');
      return;
    }
    if (flags & Flag.ACK) return;
    if (payload.length % 6 !== 0) {
      this.#fail('SETTINGS whose length is not a multiple of 6', 0x6);
      return;
    }
    // Nothing the server can set changes what we send: no encoder table, tiny requests.
    this.#socket.write(SETTINGS_ACK);
    if (this.#settingsSeen) return;
    this.#settingsSeen = true;
    const ready = this.#onSettings;
    this.#onSettings = undefined;
    ready?.();
  }

  #ping(flags: number, payload: Buffer): void {
    if (payload.length !== 8) {
      this.#fail('PING whose payload is not 8 bytes', 0x6);
      return;
    }
    if ((flags & Flag.ACK) === 0) {
      this.#socket.write(frame(FrameType.PING, Flag.ACK, 0, payload));
      return;
    }
    if (payload.equals(PING_PAYLOAD)) this.#answer();
  }

  /** Streams the server will not process fail at once; the rest finish, then the connection closes. */
  #goaway(payload: Buffer): void {
    if (payload.length < 8) {
      this.#fail('GOAWAY shorter than 8 bytes', 0x6);
      return;
    }
    this.#goingAway = true;
    const last = payload.readUInt32BE(0) & 0x7fff_ffff;
    for (const [id, stream] of [...this.#streams]) {
      if (id <= last) continue;
      this.#streams.delete(id);
      stream.sink.end({ ...stream, connectionError: 'the server sent GOAWAY before processing the call' });
    }
    if (this.#streams.size === 0) this.#lost('the server sent GOAWAY');
    // The connection is going: liveness hears of it now, not when the last call ends.
    else this.#peerClosed();
  }
}

function ignoreConnectResult(): void {}

/** A frame's payload without its padding (and `skip` bytes of priority fields); undefined when the padding overruns it. */
function unpad(flags: number, payload: Buffer, skip: number): Buffer | undefined {
  let start = skip;
  let end = payload.length;
  if (flags & Flag.PADDED) {
    if (payload.length < 1) return undefined;
    start += 1;
    end -= payload[0] as number;
  }
  return start > end ? undefined : payload.subarray(start, end);
}

function toHeaderMap(fields: ReturnType<typeof decodeBlock>): HeaderMap {
  const map: HeaderMap = {};
  for (const field of fields) {
    if (field.representation === 'size-update') continue;
    const seen = map[field.name];
    map[field.name] = seen === undefined ? field.value : `${seen}, ${field.value}`;
  }
  return map;
}
