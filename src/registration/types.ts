/**
 * The registrar (client) side of the kubelet registration handshake, as used
 * by the register operation, the liveness probe and tests. Implemented over
 * node:http2 (h2-client.ts) with the generated protobuf-es messages (src/registration/gen).
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
  close(): void;
}

export type DialOptions = CallOptions;

/**
 * Opens a connection and waits until it is ready. Fails fast with
 * BerthError BERTH_DIAL_FAILED when nothing listens (ECONNREFUSED/ENOENT),
 * and after `timeoutMs` when the peer never becomes ready.
 */
export type DialRegistration = (socketPath: string, options: DialOptions) => Promise<RegistrationConnection>;
