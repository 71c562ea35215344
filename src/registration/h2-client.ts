/**
 * The registration handshake's transport: gRPC unary calls on one raw
 * HTTP/2 connection per dial (h2-connection.ts), no grpc-js and no node:http2.
 *
 * Why not grpc-js here: a grpc-js client builds a channel, a resolver, a
 * subchannel and a load balancer for every dial, and the kubelet's handshake
 * dials fresh every time and makes two unary calls (2.0 CPU-seconds against
 * 0.75 on a bare node:http2 session for 1,000 handshakes, issue 8); and
 * node:http2's sessions and streams were then the largest cost left (issue 20).
 * The handlers' long-lived clients (CSI, DRA, device plugins) stay on grpc-js.
 *
 * What gRPC asks of a unary client, and no more: the request headers, the
 * 5-byte length prefix, `grpc-timeout`, the status from trailers (or a
 * trailers-only response), HTTP status and RST_STREAM codes mapped as the
 * gRPC spec's http-grpc-status-mapping says, and a cap on the reply size.
 */
import { abortedError, whenAborted } from '../common/index.js';
import { H2Connection, type HeaderMap, type StreamEnd } from './h2-connection.js';
import { ErrorCode, requestHeaderBlock, unaryRequestFrames } from './h2-frames.js';
import { connectPipeStream, type PipeStream } from './pipe-stream.js';

/** gRPC status codes by number (grpc/doc/statuscodes.md). */
const STATUS_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

const Status = {
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** A failed call, worded as grpc-js words it ("4 DEADLINE_EXCEEDED: Deadline exceeded"). */
export class GrpcCallError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`${code} ${STATUS_NAMES[code] ?? 'UNKNOWN'}: ${details}`);
    this.name = 'GrpcCallError';
  }
}

/** Why a connect failed, for the dial error's text. */
export interface ConnectFailure {
  reason: string;
  cause: unknown;
}

export type SessionAttempt =
  | { kind: 'ready'; session: H2Connection }
  /** Refused, missing, not a socket: nothing will answer; the dial fails now. */
  | { kind: 'failed'; failure: ConnectFailure }
  /** Accepted and closed before HTTP/2 settings, or EAGAIN (full backlog): worth another try. */
  | { kind: 'transient'; failure: ConnectFailure }
  | { kind: 'timeout' };

const CLOSED_EARLY: ConnectFailure = {
  reason: 'the listener closed the connection before the HTTP/2 handshake',
  cause: undefined,
};

export type ConnectAttempt =
  | { kind: 'connected'; socket: PipeStream }
  | Extract<SessionAttempt, { kind: 'failed' | 'transient' | 'timeout' }>;

/** What a call without a signal (or settled before it listened) takes back. */
const NO_LISTENER = (): void => {};

/**
 * One connect() to `socketPath`. A refusal, a missing file or not-a-socket is
 * `failed`: nothing will answer. A full backlog (EAGAIN) is `transient`.
 */
export function connectSocket(
  socketPath: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ConnectAttempt> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let offAbort = NO_LISTENER;
    const done = (result: ConnectAttempt | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      offAbort();
      if (result instanceof Error || result.kind !== 'connected') socket.destroy();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    // The stream keeps no reference to this callback once it has been called:
    // a registered plugin's connection lives for good (liveness holds it), and
    // must not keep the dial's scope (its timer, AbortSignal and promise).
    const socket = connectPipeStream(socketPath, (err) => {
      if (err === undefined) {
        done({ kind: 'connected', socket });
        return;
      }
      const failure = { reason: describeConnectError(err), cause: err };
      done(err.code === 'EAGAIN' ? { kind: 'transient', failure } : { kind: 'failed', failure });
    });
    const onAbort = () => done(abortedError(signal, `dial ${socketPath}`));
    const timer = setTimeout(() => done({ kind: 'timeout' }), timeoutMs);
    if (signal?.aborted) onAbort();
    else offAbort = whenAborted(signal, onAbort);
  });
}

/**
 * HTTP/2 on a connected socket. Ready once the server's SETTINGS arrived,
 * which proves an HTTP/2 server is there (a listener that accepted and
 * closed is `transient`). The socket is destroyed unless the result is ready.
 * `firstCall` may open a stream on the new connection at once: its frames
 * go out with the preface (a client need not wait for the server's
 * SETTINGS, RFC 9113 section 3.4), and it fails with the connection if the
 * result is not ready.
 */
export function startSession(
  socket: PipeStream,
  timeoutMs: number,
  signal?: AbortSignal,
  firstCall?: (session: H2Connection) => void,
): Promise<SessionAttempt> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let offAbort = NO_LISTENER;
    let offClose = NO_LISTENER;
    const finish = (result: SessionAttempt | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      offAbort();
      offClose();
      if (result instanceof Error || result.kind !== 'ready') {
        session?.destroy();
        socket.destroy();
      }
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const onAbort = () => finish(abortedError(signal, 'HTTP/2 handshake'));
    const onClose = () => finish({ kind: 'transient', failure: CLOSED_EARLY });
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    let session: H2Connection | undefined;
    if (socket.destroyed) {
      finish({ kind: 'transient', failure: CLOSED_EARLY });
      return;
    }
    offClose = socket.onClose(onClose);
    // The preface and `firstCall`'s frames leave in one write.
    socket.cork();
    const opened = new H2Connection(socket, () => finish({ kind: 'ready', session: opened }));
    session = opened;
    firstCall?.(opened);
    socket.uncork();
    if (signal?.aborted) onAbort();
    else offAbort = whenAborted(signal, onAbort);
  });
}

/** connectSocket, then startSession, within one deadline. */
export async function openSession(
  socketPath: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<SessionAttempt> {
  const startedAt = Date.now();
  const connected = await connectSocket(socketPath, timeoutMs, signal);
  if (connected.kind !== 'connected') return connected;
  return startSession(connected.socket, Math.max(1, timeoutMs - (Date.now() - startedAt)), signal);
}

/** A connect error in the dial error's words ("connection refused (ECONNREFUSED): …"). */
export function describeConnectError(err: { code?: string | undefined; message: string }): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED): no process is listening on the socket';
    case 'ENOENT':
      return 'no such file (ENOENT): the socket does not exist';
    case 'EACCES':
      return 'permission denied (EACCES)';
    case 'ENOTSOCK':
      return 'not a socket (ENOTSOCK)';
    case 'EAGAIN':
      return "the listener's backlog is full (EAGAIN)";
    default:
      return err.code ? `${err.code}: ${err.message}` : err.message;
  }
}

export interface UnaryCallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** The largest reply message accepted (RESOURCE_EXHAUSTED beyond it, as gRPC's max receive size). */
  maxResponseBytes: number;
  /** For the abort error's text. */
  what: string;
}

/**
 * One unary call: resolves with the reply message's bytes, rejects with a
 * GrpcCallError (or BERTH_ABORTED when `signal` fires).
 */
export function unaryCall(
  session: H2Connection,
  path: string,
  request: Uint8Array,
  options: UnaryCallOptions,
): Promise<Buffer> {
  const call = openUnaryCall(session, path, request, options);
  call.armDeadline(options.timeoutMs);
  return call.result;
}

/** A unary call whose frames are sent, and whose deadline runs once armed. */
export interface OpenedUnaryCall {
  readonly result: Promise<Buffer>;
  /**
   * Starts the call's deadline: DEADLINE_EXCEEDED `ms` from now unless it has
   * ended. Until then only the signal, the connection or the reply end it.
   * Later calls do nothing.
   */
  armDeadline(ms: number): void;
}

/**
 * Sends a unary call without starting its deadline (its `grpc-timeout` header
 * still says `options.timeoutMs`): the registration handshake sends GetInfo
 * with the connection preface, and its deadline starts where the kubelet's
 * does, once the connection is up and the caller asks for the answer
 * (dial.ts), not while the connect is still under way.
 */
export function openUnaryCall(
  session: H2Connection,
  path: string,
  request: Uint8Array,
  options: UnaryCallOptions,
): OpenedUnaryCall {
  let timer: NodeJS.Timeout | undefined;
  let armDeadline: (ms: number) => void = () => {};
  const result = new Promise<Buffer>((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(abortedError(options.signal, options.what));
      return;
    }
    let settled = false;
    let streamId: number | undefined;
    let received = 0;
    let announced: number | undefined;
    let firstChunk: Buffer | undefined;
    let offAbort = NO_LISTENER;
    const finish = (result: Buffer | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      offAbort();
      if (result instanceof Error) {
        if (streamId !== undefined) session.cancelStream(streamId);
        reject(result);
      } else resolve(result);
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      // The prefix announces the message's size: refuse an oversized one before it arrives.
      if (announced === undefined) {
        if (firstChunk === undefined && chunk.length < 5) firstChunk = chunk;
        else {
          const head = firstChunk === undefined ? chunk : Buffer.concat([firstChunk, chunk]);
          if (head.length >= 5) announced = head.readUInt32BE(1);
          else firstChunk = head;
        }
        if (announced !== undefined && announced > options.maxResponseBytes) {
          finish(
            new GrpcCallError(
              Status.RESOURCE_EXHAUSTED,
              `Received message larger than max (${announced} vs. ${options.maxResponseBytes})`,
            ),
          );
          return;
        }
      }
      if (received > options.maxResponseBytes + 5) {
        finish(
          new GrpcCallError(Status.INTERNAL, 'the reply holds more than the one message of a unary call'),
        );
      }
    };
    const onEnd = (end: StreamEnd) => {
      if (settled) return;
      const outcome = callOutcome(end);
      finish(outcome ?? readMessage(Buffer.concat(end.body), options.maxResponseBytes));
    };
    const onAbort = () => finish(abortedError(options.signal, options.what));
    const expire = () => finish(new GrpcCallError(Status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
    armDeadline = (ms) => {
      if (settled || timer !== undefined) return;
      // The verdict waits for the next check phase: a reply that arrived while this process was
      // busy is read in the poll phase between (timers run first in a turn), not refused as late.
      timer = setTimeout(() => setImmediate(expire), ms);
    };
    offAbort = whenAborted(options.signal, onAbort);
    const block = requestHeaderBlock(path, grpcTimeout(options.timeoutMs));
    streamId = session.openStream((id) => unaryRequestFrames(id, block, request), {
      data: onData,
      end: onEnd,
    });
    if (streamId === undefined) finish(new GrpcCallError(Status.UNAVAILABLE, 'the connection is closed'));
  });
  return { result, armDeadline: (ms) => armDeadline(ms) };
}

/** The call's error, or undefined when it ended with grpc-status 0. */
function callOutcome(end: StreamEnd): GrpcCallError | undefined {
  const { headers, trailers } = end;
  // A trailers-only response carries the status in its headers.
  const statusSource: HeaderMap | undefined =
    trailers ?? (headers?.['grpc-status'] !== undefined ? headers : undefined);
  if (statusSource !== undefined) {
    const code = Number(statusSource['grpc-status']);
    if (!/^\d+$/.test(statusSource['grpc-status'] ?? '') || code > 16) {
      return new GrpcCallError(
        Status.UNKNOWN,
        `invalid grpc-status ${JSON.stringify(statusSource['grpc-status'])}`,
      );
    }
    if (code === 0) return undefined;
    return new GrpcCallError(code, decodeGrpcMessage(statusSource['grpc-message']));
  }
  const httpStatus = headers === undefined ? undefined : Number(headers[':status']);
  if (httpStatus !== undefined && httpStatus !== 200) {
    return new GrpcCallError(httpToGrpc(httpStatus), `Received HTTP status code ${httpStatus}`);
  }
  if (end.connectionError !== undefined) {
    return new GrpcCallError(
      Status.UNAVAILABLE,
      `the connection closed before the call finished (${end.connectionError})`,
    );
  }
  if (end.rstCode !== undefined && end.rstCode !== ErrorCode.NO_ERROR) {
    return new GrpcCallError(rstToGrpc(end.rstCode), `Received RST_STREAM with code ${end.rstCode}`);
  }
  return new GrpcCallError(Status.INTERNAL, 'the call ended without a gRPC status');
}

/** The one length-prefixed message of a unary reply. */
function readMessage(body: Buffer, maxBytes: number): Buffer | GrpcCallError {
  if (body.length < 5) return new GrpcCallError(Status.INTERNAL, 'No message received');
  if (body[0] !== 0) {
    return new GrpcCallError(Status.INTERNAL, 'the reply is compressed, but no compression was offered');
  }
  const length = body.readUInt32BE(1);
  if (length > maxBytes) {
    return new GrpcCallError(
      Status.RESOURCE_EXHAUSTED,
      `Received message larger than max (${length} vs. ${maxBytes})`,
    );
  }
  if (body.length !== 5 + length) {
    return new GrpcCallError(
      Status.INTERNAL,
      `the reply is ${body.length - 5} bytes after its prefix, which announced ${length}`,
    );
  }
  return body.subarray(5);
}

/** grpc-timeout: at most 8 digits and a unit (PROTOCOL-HTTP2.md). */
function grpcTimeout(timeoutMs: number): string {
  const ms = Math.max(1, Math.ceil(timeoutMs));
  return ms < 1e8 ? `${ms}m` : `${Math.min(99_999_999, Math.ceil(ms / 1000))}S`;
}

/** grpc-message is percent-encoded (PROTOCOL-HTTP2.md). */
function decodeGrpcMessage(value: string | undefined): string {
  const text = value ?? '';
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** grpc/doc/http-grpc-status-mapping.md */
function httpToGrpc(status: number): number {
  switch (status) {
    case 400:
      return Status.INTERNAL;
    case 401:
      return Status.UNAUTHENTICATED;
    case 403:
      return Status.PERMISSION_DENIED;
    case 404:
      return Status.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return Status.UNAVAILABLE;
    default:
      return Status.UNKNOWN;
  }
}

function rstToGrpc(code: number): number {
  switch (code) {
    case ErrorCode.REFUSED_STREAM:
      return Status.UNAVAILABLE;
    case ErrorCode.CANCEL:
      return Status.CANCELLED;
    case ErrorCode.ENHANCE_YOUR_CALM:
      return Status.RESOURCE_EXHAUSTED;
    case ErrorCode.INADEQUATE_SECURITY:
      return Status.PERMISSION_DENIED;
    default:
      return Status.INTERNAL;
  }
}
