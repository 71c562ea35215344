import { connect, type Socket } from 'node:net';
import { getSystemErrorName } from 'node:util';
import {
  type PipeBinding,
  type PipeHandle,
  pipeBinding,
  type StreamBinding,
  startPipeConnect,
  streamBinding,
} from './pipe-binding.js';

/**
 * The byte stream under one registration connection (h2-connection.ts): a
 * client connection on a unix socket with no stream machinery.
 *
 * Why not a `net.Socket`: its Duplex, its two stream states, its events and
 * its write path cost about 135 µs of CPU for a connect, two small writes, a
 * read and a close, where the same on node's pipe binding costs about 48 µs
 * (5,000 connections to node servers in another process, 64 at a time; the
 * registration handshake is connect, four or five writes, two or three reads).
 * A storm of 1,000 plugins spent about a seventh of berth's CPU in `net` and
 * the stream modules under it (bench/results.md).
 *
 * Where node's bindings are not the shape used here, the same interface is
 * served by a `net.Socket` (`connectPipeStream` picks; tests use both).
 */
export interface PipeStream {
  /** Closed, by either side or by an error; nothing more is read or written. */
  readonly destroyed: boolean;
  readonly bytesRead: number;
  /**
   * Where reads go from now on. A chunk is only valid during the call (all
   * connections read into one buffer): keep a copy of what must outlive it.
   * Bytes read before a reader was set are kept, and replayed to it in a microtask.
   */
  setReader(read: (chunk: Buffer) => void): void;
  /** `callback` runs once when the stream closes (after the close, as net's 'close'). Returns its remover. */
  onClose(callback: () => void): () => void;
  /** Writes are queued until connected, and while corked. A failed write closes the stream. */
  write(data: Buffer): void;
  /** Writes made until the matching uncork() leave in one system call. */
  cork(): void;
  uncork(): void;
  /** Closes once what was written has left (no half-close: the peer reads our bytes, then EOF). */
  end(): void;
  destroy(): void;
  /** No longer holds the process open. */
  unref(): void;
}

/** Called once, asynchronously, when the connect is done: undefined, or node's connect error. Not called after destroy(). */
export type ConnectDone = (error: NodeJS.ErrnoException | undefined) => void;

/**
 * One buffer for every connection's reads: libuv reads into it and the
 * reader parses the bytes before the next read lands, so a read allocates nothing.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** Connects to a unix socket: on node's pipe binding where it has the expected shape, else on `net`. */
export function connectPipeStream(path: string, done: ConnectDone): PipeStream {
  if (rawBindings !== undefined) {
    try {
      return new RawPipeStream(rawBindings, path, done);
    } catch {
      rawBindings = undefined; // a binding of another shape: net from now on
    }
  }
  return new NetPipeStream(path, done);
}

/** The same stream on `net.Socket`, whatever the bindings; exported for its test. */
export function connectNetPipeStream(path: string, done: ConnectDone): PipeStream {
  return new NetPipeStream(path, done);
}

/** The handle methods a RawPipeStream calls, checked once: a node without them uses net. */
const HANDLE_METHODS = ['connect', 'readStart', 'useUserBuffer', 'writeBuffer', 'writev', 'close', 'unref'];

let rawBindings: { pipe: PipeBinding; stream: StreamBinding } | undefined =
  pipeBinding !== undefined &&
  streamBinding !== undefined &&
  HANDLE_METHODS.every(
    (name) =>
      typeof (pipeBinding?.Pipe.prototype as unknown as Record<string, unknown> | undefined)?.[name] ===
      'function',
  )
    ? { pipe: pipeBinding, stream: streamBinding }
    : undefined;

/** Whether connectPipeStream uses node's bindings (for tests and the bench's notes). */
export function pipeStreamIsRaw(): boolean {
  return rawBindings !== undefined;
}

/** Node's own connect error ("connect ECONNREFUSED <path>", with code, errno, syscall and address). */
function connectError(status: number, path: string): NodeJS.ErrnoException {
  const code = getSystemErrorName(status);
  const error: NodeJS.ErrnoException & { address?: string } = new Error(`connect ${code} ${path}`);
  error.errno = status;
  error.code = code;
  error.syscall = 'connect';
  error.address = path;
  return error;
}

/** Shared by the two kinds: close listeners, early bytes, the reader. */
abstract class StreamBase implements PipeStream {
  #reader: ((chunk: Buffer) => void) | undefined;
  #early: Buffer[] = [];
  readonly #closeListeners = new Set<() => void>();
  #closeFired = false;
  bytesRead = 0;

  abstract readonly destroyed: boolean;
  abstract write(data: Buffer): void;
  abstract cork(): void;
  abstract uncork(): void;
  abstract end(): void;
  abstract destroy(): void;
  abstract unref(): void;

  setReader(read: (chunk: Buffer) => void): void {
    this.#reader = read;
    const early = this.#early;
    this.#early = [];
    if (early.length > 0)
      queueMicrotask(() => {
        for (const chunk of early) if (!this.destroyed) read(chunk);
      });
  }

  onClose(callback: () => void): () => void {
    if (this.#closeFired) {
      queueMicrotask(callback);
      return () => {};
    }
    this.#closeListeners.add(callback);
    return () => this.#closeListeners.delete(callback);
  }

  protected deliver(chunk: Buffer): void {
    this.bytesRead += chunk.length;
    if (this.#reader !== undefined) this.#reader(chunk);
    else this.#early.push(Buffer.from(chunk));
  }

  protected fireClose(): void {
    if (this.#closeFired) return;
    this.#closeFired = true;
    this.#early = [];
    const listeners = [...this.#closeListeners];
    this.#closeListeners.clear();
    for (const listener of listeners) listener();
  }
}

class RawPipeStream extends StreamBase {
  readonly #handle: PipeHandle;
  /** Node's stream binding: shared by every stream (one field, not four copies of its parts). */
  readonly #stream: StreamBinding;
  /** Owed until the connect is done (not after destroy()). */
  #done: ConnectDone | undefined;
  #connected = false;
  #closed = false;
  #ending = false;
  #corked = 0;
  #queued: Buffer[] = [];
  /** Writes libuv finishes later (the socket's send buffer was full). */
  #inFlight = 0;

  constructor(bindings: { pipe: PipeBinding; stream: StreamBinding }, path: string, done: ConnectDone) {
    super();
    this.#stream = bindings.stream;
    this.#done = done;
    const { handle, request, status } = startPipeConnect(bindings.pipe, path);
    this.#handle = handle;
    // No closure made here names `done`: the read callback made later must
    // not keep it (it holds the dialler's scope, and a registered plugin's
    // connection lives for good).
    request.oncomplete = (result) => this.#connectDone(result, path);
    if (status !== 0) queueMicrotask(() => this.#connectDone(status, path));
  }

  #connectDone(status: number, path: string): void {
    const done = this.#done;
    this.#done = undefined;
    if (this.#closed || done === undefined) return;
    if (status === 0) status = this.#startReading();
    if (status !== 0) {
      this.#close();
      done(connectError(status, path));
      return;
    }
    this.#connected = true;
    done(undefined);
    if (this.#corked === 0) this.#flush();
  }

  #startReading(): number {
    this.#handle.useUserBuffer(READ_BUFFER);
    this.#handle.onread = () => this.#onRead();
    return this.#handle.readStart();
  }

  get destroyed(): boolean {
    return this.#closed;
  }

  write(data: Buffer): void {
    if (this.#closed || this.#ending) return;
    if (!this.#connected || this.#corked > 0) {
      this.#queued.push(data);
      return;
    }
    this.#send(data, undefined);
  }

  cork(): void {
    this.#corked += 1;
  }

  uncork(): void {
    if (this.#corked === 0) return;
    this.#corked -= 1;
    if (this.#corked === 0 && this.#connected) this.#flush();
  }

  end(): void {
    if (this.#closed || this.#ending) return;
    this.#corked = 0;
    if (this.#connected) this.#flush();
    this.#ending = true;
    // Not connected yet, nothing was sent: the queued writes go with it. Else
    // what is in flight goes out first (#written closes after the last).
    if (!this.#connected || this.#inFlight === 0) this.#close();
  }

  destroy(): void {
    this.#close();
  }

  unref(): void {
    if (!this.#closed) this.#handle.unref();
  }

  #flush(): void {
    const queued = this.#queued;
    if (queued.length === 0) return;
    this.#queued = [];
    if (queued.length === 1) this.#send(queued[0] as Buffer, undefined);
    else this.#send(undefined, queued);
  }

  #send(one: Buffer | undefined, many: Buffer[] | undefined): void {
    if (this.#closed) return;
    const request = new this.#stream.WriteWrap();
    request.handle = this.#handle;
    request.buffer = null;
    request.oncomplete = (status) => this.#written(status);
    const status =
      one !== undefined
        ? this.#handle.writeBuffer(request, one)
        : this.#handle.writev(request, many as Buffer[], true);
    if (status !== 0) {
      this.#close(); // EPIPE, ECONNRESET: the peer is gone, and the close listeners hear of it
      return;
    }
    const { streamBaseState, kLastWriteWasAsync } = this.#stream;
    if (streamBaseState[kLastWriteWasAsync] !== 0) {
      request.buffer = one ?? many; // held until libuv is done with it
      this.#inFlight += 1;
    }
  }

  #written(status: number): void {
    this.#inFlight -= 1;
    if (status < 0 || (this.#ending && this.#inFlight === 0)) this.#close();
  }

  #onRead(): void {
    const { streamBaseState, kReadBytesOrError } = this.#stream;
    const count = streamBaseState[kReadBytesOrError] as number;
    if (count > 0) {
      if (!this.#closed) this.deliver(READ_BUFFER.subarray(0, count));
      return;
    }
    if (count === 0) return;
    this.#close(); // EOF or a read error
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queued = [];
    // `onread` stays: node's setter aborts the process on anything but a function.
    this.#handle.close(() => this.fireClose());
  }
}

class NetPipeStream extends StreamBase {
  readonly #socket: Socket;
  /** Owed until the connect is done, and dropped then (it holds the dialler's scope). */
  #done: ConnectDone | undefined;

  constructor(path: string, done: ConnectDone) {
    super();
    this.#done = done;
    const socket = connect({
      path,
      onread: {
        buffer: READ_BUFFER,
        callback: (bytes: number, buffer: Uint8Array) => {
          this.deliver((buffer as Buffer).subarray(0, bytes));
          return true;
        },
      },
    });
    this.#socket = socket;
    socket.once('connect', () => this.#settle(undefined));
    // After the connect, an error is followed by 'close', which is what the reader hears.
    socket.on('error', (err: NodeJS.ErrnoException) => this.#settle(err));
    socket.on('close', () => {
      this.#done = undefined;
      this.fireClose();
    });
  }

  #settle(error: NodeJS.ErrnoException | undefined): void {
    const done = this.#done;
    this.#done = undefined;
    done?.(error);
  }

  get destroyed(): boolean {
    return this.#socket.destroyed;
  }

  write(data: Buffer): void {
    // After end(), net would fail the socket ("write after end"); the raw stream drops such writes.
    if (!this.#socket.destroyed && !this.#socket.writableEnded) this.#socket.write(data);
  }

  cork(): void {
    this.#socket.cork();
  }

  uncork(): void {
    this.#socket.uncork();
  }

  end(): void {
    this.#socket.destroySoon();
  }

  destroy(): void {
    this.#done = undefined;
    this.#socket.destroy();
  }

  unref(): void {
    this.#socket.unref();
  }
}
