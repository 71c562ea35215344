/**
 * The registrar side of the kubelet handshake: one fresh HTTP/2 connection
 * per dial (the kubelet never reuses them), GetInfo and
 * NotifyRegistrationStatus, on a raw HTTP/2 connection (h2-client.ts says
 * why not grpc-js or node:http2). A registered plugin's connection can be
 * handed to liveness instead of closed (`hold`), so a registration costs one
 * connection, not two.
 *
 * Unlike the kubelet's 10 s blocking dial, a socket with no listener (a stale
 * file left by a crash, or a path that is gone) fails at once with the OS
 * reason. A listener that accepts and closes before HTTP/2 starts (a server
 * going away, or one between states) is tried again after 10 ms, doubling to
 * 100 ms, until it answers, refuses, or the dial's deadline passes.
 */

import { resolve as resolvePath } from 'node:path';
import { abortedError, BerthError, nextBackoffMs, sleep, systemClock } from '../common/index.js';
import { UNIX_SOCKET_PATH_MAX_BYTES } from '../unix-grpc/unix-grpc-options.js';
import { assertTimeout } from './call-deadline.js';
import {
  connectSocket,
  describeConnectError,
  GrpcCallError,
  type OpenedUnaryCall,
  openUnaryCall,
  type SessionAttempt,
  startSession,
  unaryCall,
} from './h2-client.js';
import { H2Connection } from './h2-connection.js';
import { PLUGIN_INFO_LIMITS } from './plugin-info-bounds.js';
import { decodePluginInfo } from './plugin-info-decode.js';
import { probeConnect } from './probe-connect.js';
import {
  checkStatusResponse,
  EMPTY_INFO_REQUEST,
  encodeRegistrationStatus,
  GET_INFO_PATH,
  NOTIFY_PATH,
} from './registrar-wire.js';
import { DIAL_RETRY_BACKOFF } from './registration-options.js';
import type {
  CallOptions,
  DialOptions,
  DialRegistration,
  HeldConnection,
  RegistrationConnection,
  RegistrationInfo,
  RegistrationStatus,
} from './types.js';

/**
 * grpc-js channel options for berth's other one-shot clients (the example
 * client): a subchannel of their own, a short reconnect backoff for a server
 * between bind() and listen(), and the plugin-info reply bound.
 */
export const freshChannelOptions = {
  'grpc.use_local_subchannel_pool': 1,
  'grpc.initial_reconnect_backoff_ms': 10,
  'grpc.max_reconnect_backoff_ms': 100,
  'grpc.max_receive_message_length': PLUGIN_INFO_LIMITS.messageBytes,
} as const;

export const dialRegistration: DialRegistration = async (socketPath, options) => {
  if (typeof socketPath !== 'string' || socketPath === '') {
    throw new BerthError('BERTH_SOCKET_PATH_EMPTY', 'socket path is empty');
  }
  assertTimeout(options.timeoutMs, `dial ${socketPath}`);
  const absolute = resolvePath(socketPath);
  assertSocketPathFits(absolute);
  const { session, earlyInfo } = await openWithRetries(absolute, options);
  return new H2RegistrationConnection(socketPath, session, earlyInfo);
};

/**
 * An idle connection for liveness to a plugin whose handshake connection
 * could not be kept: connects and starts HTTP/2 without waiting; a refusal or
 * a close shows as `onPeerClose`.
 */
export function openHeldConnection(socketPath: string): HeldConnection {
  return H2Connection.connectIdle(socketPath);
}

function assertSocketPathFits(path: string): void {
  const bytes = Buffer.byteLength(path);
  if (bytes > UNIX_SOCKET_PATH_MAX_BYTES) {
    throw dialError(
      path,
      `the path is ${bytes} bytes, longer than the unix socket limit of ${UNIX_SOCKET_PATH_MAX_BYTES}`,
    );
  }
}

class H2RegistrationConnection implements RegistrationConnection {
  /** The GetInfo sent with the preface (DialOptions.getInfoFirstMs), until the first getInfo() takes it. */
  #earlyInfo: OpenedUnaryCall | undefined;

  constructor(
    readonly socketPath: string,
    readonly session: H2Connection,
    earlyInfo?: OpenedUnaryCall,
  ) {
    this.#earlyInfo = earlyInfo;
  }

  async getInfo(options: CallOptions): Promise<RegistrationInfo> {
    const what = `GetInfo at socket ${this.socketPath}`;
    assertTimeout(options.timeoutMs, what);
    // The early call, or one made now; either's deadline starts now (the kubelet's starts once its dial is done).
    const call = this.#earlyInfo ?? openGetInfo(this.session, options, what);
    this.#earlyInfo = undefined;
    call.armDeadline(options.timeoutMs);
    try {
      const bytes = await call.result;
      return decodeInfo(bytes);
    } catch (err) {
      throw wrapCallError('BERTH_GET_INFO_FAILED', what, err);
    }
  }

  async notifyRegistrationStatus(status: RegistrationStatus, options: CallOptions): Promise<void> {
    const what = `NotifyRegistrationStatus at socket ${this.socketPath}`;
    assertTimeout(options.timeoutMs, what);
    try {
      const bytes = await unaryCall(this.session, NOTIFY_PATH, encodeRegistrationStatus(status), {
        ...options,
        maxResponseBytes: PLUGIN_INFO_LIMITS.messageBytes,
        what,
      });
      checkStatusResponse(bytes);
    } catch (err) {
      throw wrapCallError('BERTH_NOTIFY_FAILED', what, err);
    }
  }

  #held = false;

  hold(): HeldConnection | undefined {
    if (this.#held || !this.session.holdIdle()) return undefined;
    this.#held = true;
    return this.session;
  }

  close(): void {
    if (!this.#held) this.session.close();
  }
}

/** A GetInfo call, sent; its deadline waits for armDeadline() (getInfo() arms it). */
function openGetInfo(session: H2Connection, options: CallOptions, what: string): OpenedUnaryCall {
  return openUnaryCall(session, GET_INFO_PATH, EMPTY_INFO_REQUEST, {
    ...options,
    maxResponseBytes: PLUGIN_INFO_LIMITS.messageBytes,
    what,
  });
}

function ignoreRejection(): void {}

/**
 * Decoded with the wire checks (plugin-info-decode.ts). A reply that fails is
 * a failed call with grpc-js's wording, which `refuseUndecodableInfo`
 * recognises to tell the plugin why.
 */
function decodeInfo(bytes: Buffer): RegistrationInfo {
  try {
    return decodePluginInfo(bytes);
  } catch (err) {
    throw new GrpcCallError(13, `Response message parsing error: ${(err as Error).message}`);
  }
}

function wrapCallError(
  code: 'BERTH_GET_INFO_FAILED' | 'BERTH_NOTIFY_FAILED',
  what: string,
  err: unknown,
): BerthError {
  return BerthError.from(err, code, {
    message: `${what} failed`,
    details: err instanceof GrpcCallError ? { grpcCode: err.code } : {},
  });
}

/**
 * One raw connect before a dial of a socket that refused last time: the
 * error a dial would fail with if it still refuses, else undefined (dial it).
 * A socket file that refused its last attempt is most likely stale, and its
 * retries come in waves (1,000 stale files retry together after each
 * backoff): a raw connect is 6-7 µs of CPU (probe-connect.ts), a refused dial
 * several times that (a Socket, node's Error, whose stack node's stream
 * machinery formats, and ours). 1,000 stale files cost a plugin node 1.22-1.26
 * CPU-s over their first 4 s with this probe, 1.33-1.35 without it.
 */
export async function refusedBeforeDial(socketPath: string): Promise<BerthError | undefined> {
  const refusal = await probeConnect(socketPath);
  if (refusal?.code !== 'ECONNREFUSED') return undefined;
  // No cause: the probe made no Error. The errno is in the details (young-socket.ts reads it there).
  return dialError(socketPath, describeConnectError(refusal), undefined, { errno: refusal.code });
}

function dialError(
  socketPath: string,
  reason: string,
  cause?: unknown,
  details?: Record<string, unknown>,
): BerthError {
  return new BerthError('BERTH_DIAL_FAILED', `cannot connect to plugin socket ${socketPath}: ${reason}`, {
    cause,
    ...(details === undefined ? {} : { details }),
  });
}

/**
 * Connects until the HTTP/2 session is up. A refusal fails at once; a
 * connection closed before HTTP/2 started (or a full backlog) is tried again
 * shortly, until the deadline.
 */
async function openWithRetries(
  socketPath: string,
  options: DialOptions,
): Promise<{ session: H2Connection; earlyInfo?: OpenedUnaryCall }> {
  const { timeoutMs, signal, getInfoFirstMs } = options;
  const what = `GetInfo at socket ${socketPath}`;
  if (getInfoFirstMs !== undefined) assertTimeout(getInfoFirstMs, what);
  let earlyInfo: OpenedUnaryCall | undefined;
  const sendGetInfo =
    getInfoFirstMs === undefined
      ? undefined
      : (session: H2Connection) => {
          earlyInfo = openGetInfo(
            session,
            { timeoutMs: getInfoFirstMs, ...(signal === undefined ? {} : { signal }) },
            what,
          );
          // Read by getInfo(), or gone with a connection never handed out.
          earlyInfo.result.catch(ignoreRejection);
        };
  const deadline = Date.now() + timeoutMs;
  let delay = nextBackoffMs(DIAL_RETRY_BACKOFF, 0);
  let last = 'no answer';
  const timedOut = (why: string, cause?: unknown) =>
    dialError(socketPath, `timed out after ${timeoutMs} ms (${why})`, cause);
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw timedOut(last);
    const connected = await connectSocket(socketPath, left, signal);
    let attempt: SessionAttempt;
    if (connected.kind === 'connected') {
      attempt = await startSession(connected.socket, Math.max(1, deadline - Date.now()), signal, sendGetInfo);
    } else attempt = connected;
    switch (attempt.kind) {
      case 'ready':
        return earlyInfo === undefined
          ? { session: attempt.session }
          : { session: attempt.session, earlyInfo };
      case 'failed':
        throw dialError(socketPath, attempt.failure.reason, attempt.failure.cause);
      case 'timeout':
        throw timedOut(
          connected.kind === 'connected' ? 'no HTTP/2 settings from the server' : 'no answer to connect',
        );
      case 'transient':
        last = attempt.failure.reason;
        if (Date.now() + delay >= deadline) throw timedOut(last, attempt.failure.cause);
        await sleep(systemClock, delay, signal).catch(() => {
          throw abortedError(signal, `dial ${socketPath}`);
        });
        delay = nextBackoffMs(DIAL_RETRY_BACKOFF, delay);
    }
  }
}
