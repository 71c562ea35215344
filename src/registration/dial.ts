/**
 * The registrar side of the kubelet handshake: one fresh gRPC connection per
 * dial (the kubelet never reuses them), GetInfo and NotifyRegistrationStatus.
 *
 * Unlike the kubelet's 10 s blocking dial, a socket with no listener (a stale
 * file left by a crash, or a path that is gone) fails at once: when the
 * channel reports TRANSIENT_FAILURE we probe the socket with a plain connect
 * and, if that is refused too, report the OS reason instead of waiting.
 */
import { connect } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { Client, connectivityState, credentials, type ServiceError } from '@grpc/grpc-js';
import { abortedError, BerthError } from '../common/index.js';
import { InfoRequestSchema, RegistrationStatusSchema } from './gen/pluginregistration/api_pb.js';
import { PLUGIN_INFO_LIMITS } from './plugin-info-bounds.js';
import type {
  CallOptions,
  DialRegistration,
  RegistrationConnection,
  RegistrationInfo,
  RegistrationStatus,
} from './types.js';
import { assertTimeout, callUnary } from './unary-call.js';
import { registrationMethods, unixTarget } from './wire.js';

/**
 * Each dial gets its own subchannel, so closing it closes the socket connection.
 * The reconnect backoff is short: a dial that lands between a server's bind()
 * and listen() is refused once, and grpc-js's default (1 s, growing) would
 * then keep a plugin that is listening a moment later waiting for a second.
 * A socket that nobody will listen on is not retried by this at all: its
 * refusal is confirmed by a plain connect and the dial fails at once.
 */
export const freshChannelOptions = {
  'grpc.use_local_subchannel_pool': 1,
  'grpc.initial_reconnect_backoff_ms': 10,
  'grpc.max_reconnect_backoff_ms': 100,
  // A plugin's GetInfo reply is a few hundred bytes; a huge one is refused by gRPC itself.
  'grpc.max_receive_message_length': PLUGIN_INFO_LIMITS.messageBytes,
} as const;

export const dialRegistration: DialRegistration = async (socketPath, options) => {
  if (typeof socketPath !== 'string' || socketPath === '') {
    throw new BerthError('BERTH_SOCKET_PATH_EMPTY', 'socket path is empty');
  }
  assertTimeout(options.timeoutMs, `dial ${socketPath}`);
  const absolute = resolvePath(socketPath);
  assertSocketPathFits(absolute);
  const client = new Client(unixTarget(absolute), credentials.createInsecure(), freshChannelOptions);
  try {
    await waitForReady(client, absolute, options);
  } catch (err) {
    client.close();
    throw err;
  }
  return new GrpcRegistrationConnection(socketPath, client);
};

/** sun_path holds 108 bytes with its NUL; a longer path cannot be connected to at all. */
const UNIX_PATH_MAX_BYTES = 107;

function assertSocketPathFits(path: string): void {
  const bytes = Buffer.byteLength(path);
  if (bytes > UNIX_PATH_MAX_BYTES) {
    throw dialError(
      path,
      `the path is ${bytes} bytes, longer than the unix socket limit of ${UNIX_PATH_MAX_BYTES}`,
    );
  }
}

class GrpcRegistrationConnection implements RegistrationConnection {
  constructor(
    readonly socketPath: string,
    readonly client: Client,
  ) {}

  async getInfo(options: CallOptions): Promise<RegistrationInfo> {
    const what = `GetInfo at socket ${this.socketPath}`;
    assertTimeout(options.timeoutMs, what);
    try {
      const info = await callUnary(
        this.client,
        registrationMethods.getInfo,
        create(InfoRequestSchema),
        options.timeoutMs,
        options.signal,
        what,
      );
      return {
        type: info.type,
        name: info.name,
        endpoint: info.endpoint,
        supportedVersions: [...info.supportedVersions],
      };
    } catch (err) {
      throw wrapCallError('BERTH_GET_INFO_FAILED', what, err);
    }
  }

  async notifyRegistrationStatus(status: RegistrationStatus, options: CallOptions): Promise<void> {
    const what = `NotifyRegistrationStatus at socket ${this.socketPath}`;
    assertTimeout(options.timeoutMs, what);
    try {
      await callUnary(
        this.client,
        registrationMethods.notifyRegistrationStatus,
        create(RegistrationStatusSchema, { pluginRegistered: status.pluginRegistered, error: status.error }),
        options.timeoutMs,
        options.signal,
        what,
      );
    } catch (err) {
      throw wrapCallError('BERTH_NOTIFY_FAILED', what, err);
    }
  }

  close(): void {
    this.client.close();
  }
}

function wrapCallError(
  code: 'BERTH_GET_INFO_FAILED' | 'BERTH_NOTIFY_FAILED',
  what: string,
  err: unknown,
): BerthError {
  return BerthError.from(err, code, {
    message: `${what} failed`,
    details: isServiceError(err) ? { grpcCode: err.code } : {},
  });
}

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number';
}

function dialError(socketPath: string, reason: string, cause?: unknown): BerthError {
  return new BerthError('BERTH_DIAL_FAILED', `cannot connect to plugin socket ${socketPath}: ${reason}`, {
    cause,
  });
}

/**
 * Drives the channel to READY. Resolves on READY; rejects on abort, on the
 * deadline, or as soon as a failed connect is confirmed by a probe.
 */
function waitForReady(client: Client, socketPath: string, options: CallOptions): Promise<void> {
  const { timeoutMs, signal } = options;
  const channel = client.getChannel();
  const deadline = Date.now() + timeoutMs;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let probing = false;
    let lastState = connectivityState.IDLE;
    let reprobe: NodeJS.Timeout | undefined;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(reprobe);
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    };
    const onAbort = () => finish(abortedError(signal, `dial ${socketPath}`));
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });

    // The channel only says "failed"; a plain connect tells us why. If the
    // probe connects, something is listening now: keep waiting for READY. But
    // a listener can die right after answering the probe, and then the channel
    // may sit in TRANSIENT_FAILURE with no further state change: so while it
    // stays there, probe again (100 ms doubling to 1 s) instead of waiting out
    // the whole dial deadline.
    const probe = (attempt: number) => {
      probing = true;
      void probeSocket(socketPath, Math.max(1, deadline - Date.now())).then((failure) => {
        if (settled) return;
        if (failure !== undefined) {
          finish(dialError(socketPath, failure.reason, failure.cause));
          return;
        }
        if (channel.getConnectivityState(false) !== connectivityState.TRANSIENT_FAILURE) {
          probing = false;
          return;
        }
        reprobe = setTimeout(() => probe(attempt + 1), Math.min(1000, 100 * 2 ** attempt));
      });
    };

    const step = () => {
      if (settled) return;
      const state = channel.getConnectivityState(true);
      lastState = state;
      if (state === connectivityState.READY) {
        finish();
        return;
      }
      if (state === connectivityState.SHUTDOWN) {
        finish(dialError(socketPath, 'the connection was closed'));
        return;
      }
      if (state === connectivityState.TRANSIENT_FAILURE && !probing) probe(0);
      channel.watchConnectivityState(state, deadline, (err?: Error) => {
        if (settled) return;
        if (err) {
          const name = connectivityState[lastState] ?? String(lastState);
          finish(dialError(socketPath, `timed out after ${timeoutMs} ms (connection state ${name})`, err));
        } else step();
      });
    };
    step();
  });
}

interface ProbeFailure {
  reason: string;
  cause: unknown;
}

/** A plain unix-socket connect: undefined if it connects, else why it failed. */
function probeSocket(socketPath: string, timeoutMs: number): Promise<ProbeFailure | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath });
    const done = (result: ProbeFailure | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    // A listener with a full backlog may neither accept nor refuse; then the
    // channel's own deadline decides.
    const timer = setTimeout(() => done(undefined), Math.min(timeoutMs, 1000));
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      done({ reason: describeConnectError(err), cause: err });
    });
  });
}

function describeConnectError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED): no process is listening on the socket';
    case 'ENOENT':
      return 'no such file (ENOENT): the socket does not exist';
    case 'EACCES':
      return 'permission denied (EACCES)';
    case 'ENOTSOCK':
      return 'not a socket (ENOTSOCK)';
    default:
      return err.code ? `${err.code}: ${err.message}` : err.message;
  }
}
