/**
 * The registrar (client) side of the kubelet registration handshake, as used
 * by the register operation, the liveness probe and tests. Implemented on a
 * raw HTTP/2 connection (h2-client.ts) with the generated protobuf-es messages (src/registration/gen).
 */
export interface RegistrationInfo {
  type: string;
  name: string;
  endpoint: string;
  supportedVersions: string[];
}

export interface RegistrationStatus {
  pluginRegistered: boolean;
  error: string;
}

export interface CallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/** One fresh connection to one plugin socket (the kubelet never reuses these). */
export interface RegistrationConnection {
  readonly socketPath: string;
  /** Throws BerthError BERTH_GET_INFO_FAILED on RPC failure or deadline. */
  getInfo(options: CallOptions): Promise<RegistrationInfo>;
  /** Throws BerthError BERTH_NOTIFY_FAILED on RPC failure or deadline. */
  notifyRegistrationStatus(status: RegistrationStatus, options: CallOptions): Promise<void>;
  /**
   * Keeps the connection open, idle, for liveness instead of closing it
   * (close() then does nothing). Undefined when it cannot be kept (closed,
   * or a dialer without the ability).
   */
  hold?(): HeldConnection | undefined;
  close(): void;
}

/**
 * An idle HTTP/2 connection to a registered plugin, held for liveness: no
 * streams, keepalive PINGs, and a callback when the plugin closes it.
 */
export interface HeldConnection {
  /** Sends one probe unless one is outstanding: a PING, or every third a health-check call (grpc-go's ping policy). */
  sendPing(): void;
  /** No PING is outstanding: the last one was answered (or none was sent). */
  readonly answered: boolean;
  /** One PING answered within `timeoutMs`: undefined, or why not. */
  ping(timeoutMs: number): Promise<string | undefined>;
  /** Runs once when the peer closes or resets the connection or sends GOAWAY (at once if it already has); not after destroy(). */
  onPeerClose(callback: () => void): void;
  destroy(): void;
}

export interface DialOptions extends CallOptions {
  /**
   * Sends GetInfo right behind the connection preface, in the same write, as
   * grpc-go's client sends its first call (it never waits for the server's
   * SETTINGS): one round trip less per handshake. The value is the call's
   * `grpc-timeout`. The connection's first getInfo() takes that call's
   * answer; its deadline is getInfo()'s `timeoutMs`, from when getInfo() is
   * called, as for a call made then. A connection closed before the server's
   * SETTINGS is redialled as before, and the early call goes again on the new
   * one. Dialers may ignore it.
   */
  getInfoFirstMs?: number;
}

/**
 * Opens a connection and waits until it is ready. Fails fast with
 * BerthError BERTH_DIAL_FAILED when nothing listens (ECONNREFUSED/ENOENT),
 * and after `timeoutMs` when the peer never becomes ready.
 */
export type DialRegistration = (socketPath: string, options: DialOptions) => Promise<RegistrationConnection>;
