/**
 * Node's own unix-socket bindings (`pipe_wrap` and `stream_wrap`, the ones
 * `net` is built on), reached through `process.binding`, which node
 * documents as deprecated (DEP0111, documentation-only) but keeps in its
 * allow-list. Used where a `net.Socket` costs more than the work it carries:
 * the connect probes (raw-unix-connect.ts) and the registration handshake's
 * connections (pipe-stream.ts).
 *
 * Every use checks the shape it needs when the module loads; a node whose
 * bindings are missing or differ (another version, the permission model)
 * gets undefined here, and callers fall back to `net`. `BERTH_NET_SOCKETS=1`
 * in the environment makes them fall back on any node: the switch for a node
 * whose bindings keep their shape but not their behaviour, which no check at
 * load can see.
 */

/** The environment variable that makes every plugin connection use `net`. */
export const NET_SOCKETS_ENV = 'BERTH_NET_SOCKETS';

export interface PipeHandle {
  connect(request: ConnectRequest, path: string): number;
  readStart(): number;
  readStop(): number;
  useUserBuffer(buffer: Uint8Array): void;
  writeBuffer(request: WriteRequest, data: Uint8Array): number;
  writev(request: WriteRequest, chunks: Uint8Array[], allBuffers: boolean): number;
  close(callback?: () => void): void;
  ref(): void;
  unref(): void;
  /**
   * Called by libuv with the byte count (or error) in
   * streamBaseState[kReadBytesOrError]. Node's setter aborts the process on
   * anything but a function: never unset it.
   */
  onread: (arrayBuffer: ArrayBuffer | undefined) => unknown;
}

export interface ConnectRequest {
  oncomplete: ((status: number) => void) | undefined;
  address: string;
}

export interface WriteRequest {
  handle: PipeHandle;
  oncomplete: ((status: number) => void) | undefined;
  /** Keeps what is being written alive until an asynchronous write completes. */
  buffer: unknown;
}

export interface PipeBinding {
  Pipe: new (type: number) => PipeHandle;
  PipeConnectWrap: new () => ConnectRequest;
  constants: { SOCKET: number };
}

export interface StreamBinding {
  WriteWrap: new () => WriteRequest;
  /** Shared with libuv: a read's byte count, whether the last write went asynchronous. */
  streamBaseState: Int32Array;
  kReadBytesOrError: number;
  kLastWriteWasAsync: number;
}

function load<T>(name: string, check: (binding: Partial<T>) => boolean): T | undefined {
  if (process.env[NET_SOCKETS_ENV] === '1') return undefined;
  try {
    const binding = (process as unknown as { binding(name: string): Partial<T> }).binding(name);
    return check(binding) ? (binding as T) : undefined;
  } catch {
    return undefined;
  }
}

export const pipeBinding: PipeBinding | undefined = load<PipeBinding>(
  'pipe_wrap',
  (b) =>
    typeof b.Pipe === 'function' &&
    typeof b.PipeConnectWrap === 'function' &&
    typeof b.constants?.SOCKET === 'number',
);

export const streamBinding: StreamBinding | undefined = load<StreamBinding>(
  'stream_wrap',
  (b) =>
    typeof b.WriteWrap === 'function' &&
    b.streamBaseState instanceof Int32Array &&
    typeof b.kReadBytesOrError === 'number' &&
    typeof b.kLastWriteWasAsync === 'number',
);

/**
 * Starts a connect on a new handle. Returns the handle, the request (whose
 * `oncomplete` the caller sets before the loop turns: completion is never
 * synchronous) and libuv's status: 0, or a negative errno for a connect that
 * failed at once. Throws, with the handle closed, when the binding does not
 * behave as it did when it was checked at load.
 */
export function startPipeConnect(
  binding: PipeBinding,
  path: string,
): { handle: PipeHandle; request: ConnectRequest; status: number } {
  const handle = new binding.Pipe(binding.constants.SOCKET);
  const request = new binding.PipeConnectWrap();
  request.address = path;
  let status: number;
  try {
    status = handle.connect(request, path);
  } catch (err) {
    handle.close();
    throw err;
  }
  if (typeof status !== 'number') {
    handle.close();
    throw new TypeError(`pipe_wrap connect returned ${typeof status}, not a status`);
  }
  return { handle, request, status };
}
