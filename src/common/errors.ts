/**
 * berth's one error class. Every error a caller can act on carries a stable
 * string code (BERTH_...), a human message, and the underlying cause.
 * The table below is the single source of truth for codes; docs/errors.md and
 * the README are checked against it by a test (src/common/errors.test.ts).
 */
export const ERROR_CODES = {
  BERTH_INVALID_ARGUMENT: 'An argument passed to a berth API was missing or malformed.',
  BERTH_SOCKET_PATH_EMPTY: 'A plugin socket path was empty ("socket path is empty").',
  BERTH_OPERATION_PENDING: 'An operation for the same key is already running.',
  BERTH_OPERATION_BACKOFF:
    'An operation for the same key failed recently and is in backoff until a retry time.',
  BERTH_DIAL_FAILED: 'berth could not connect to a plugin socket (no listener, refused, or timed out).',
  BERTH_GET_INFO_FAILED: 'The GetInfo call on a plugin socket failed or timed out.',
  BERTH_NO_HANDLER: 'No handler is registered for the plugin type a plugin reported.',
  BERTH_VALIDATION_FAILED: 'A plugin handler rejected the plugin in validatePlugin.',
  BERTH_REGISTER_FAILED: "A plugin handler's registerPlugin failed.",
  BERTH_NOTIFY_FAILED: 'The NotifyRegistrationStatus call to a plugin failed.',
  BERTH_PLUGIN_CALL_FAILED:
    "A call to a plugin's own service (e.g. the example API's GetExampleInfo) failed or timed out.",
  BERTH_HANDLER_MISSING: 'A registered plugin has no handler to deregister it with.',
  BERTH_LIVENESS_FAILED: 'A registered plugin stopped answering the liveness probe.',
  BERTH_WATCHER_FAILED: 'The plugin directory could not be created, read or watched.',
  BERTH_PLUGIN_INVALID:
    'A plugin registration was rejected by the registry (missing type, name or connection info).',
  BERTH_PLUGIN_NOT_FOUND: 'No current instance of the named plugin is registered.',
  BERTH_NO_DISPENSER: 'No dispenser is configured for the plugin type.',
  BERTH_NO_PLUGINS_FOR_TYPE: 'No plugins have ever been registered for the type.',
  BERTH_NO_PLUGIN_FOR_ALLOC: 'No instance of the plugin has the given allocation (instance) id.',
  BERTH_SUBSCRIBER_LAGGED: 'A bounded subscriber fell behind and its stream was ended; it must re-list.',
  BERTH_SHUT_DOWN: 'The component was stopped or shut down.',
  BERTH_ABORTED: 'The operation was aborted by its AbortSignal.',
  BERTH_STORAGE_FAILED: 'Reading or writing persisted state failed.',
  BERTH_STORAGE_CORRUPT: 'Persisted state could not be read; it was moved aside and berth started empty.',
  BERTH_STORAGE_VERSION: 'Persisted state has a schema version this berth cannot read.',
  BERTH_OBJECT_NOT_REGISTERED: 'The object is not referenced by any registered pod.',
  BERTH_OBJECT_NOT_FOUND: 'The object does not exist in its source.',
  BERTH_CACHE_SYNC_TIMEOUT: "The object's watch did not finish its first list in time.",
  BERTH_UNEXPECTED_OBJECT_TYPE: 'A source returned something that is not the expected kind of object.',
  BERTH_SOURCE_FAILED: 'An object source (directory, etcd, Kubernetes) failed a get, list or watch.',
  BERTH_RESOURCE_VERSION_TOO_OLD: 'A watch asked for a resource version the source no longer has; re-list.',
  BERTH_UNKNOWN_STRATEGY: 'An unknown object change-detection strategy was configured.',
  BERTH_CONFIG_INVALID: 'A configuration file or flag value is invalid.',
  BERTH_USAGE: 'A command was called with wrong arguments or flags.',
  BERTH_DEPENDENCY_MISSING:
    'The config needs an optional package (etcd3, @kubernetes/client-node) that is not installed; the message names the install command.',
  BERTH_API_UNREACHABLE: "The CLI could not reach the daemon's API socket.",
  BERTH_API_ERROR: 'The daemon answered an API call with an error.',
  BERTH_NOT_FOUND: 'An API route or resource does not exist.',
  BERTH_BAD_REQUEST: 'An API request was malformed.',
  BERTH_PAYLOAD_TOO_LARGE: 'An API request body was larger than allowed.',
  BERTH_LIMIT_EXCEEDED:
    'A request would exceed a documented cap (pods per node, references per pod); the message names the config key.',
  BERTH_NOT_READY: 'The daemon is still starting (state restore, first scan) or is shutting down.',
  BERTH_DAEMON_RUNNING: 'Another berth daemon already serves the API socket of this data directory.',
  BERTH_PLUGINS_DIR_LOCKED:
    'Another berth registrar holds the lock of this plugins directory (one registrar per directory); the message names its pid and data dir. Start this one with --observe, or stop the other.',
  BERTH_KUBELET_OWNS_DIR:
    'The plugins directory looks owned by a running kubelet (its device-plugins/kubelet.sock answers beside it); start berth with --observe, or with --force to register anyway.',
  BERTH_OBSERVE_ONLY:
    'berth runs in observe mode: it does not allocate devices, prepare claims, manage CSI volumes or tell plugins anything (another registrar owns the directory).',
  BERTH_UNAUTHORIZED:
    'A TCP API request had no valid bearer token (or client certificate); send Authorization: Bearer <token>.',
  BERTH_FORBIDDEN_HOST:
    'A TCP API request named a Host that is not the listen address or a configured name (DNS rebinding guard).',
  BERTH_LISTEN_FAILED: "A server berth starts (the dashboard's page server) could not listen on its address.",
  BERTH_TOO_MANY_CLIENTS: 'The API connection or event-stream cap was reached; retry later.',
  BERTH_PLUGIN_INFO_INVALID:
    "A plugin's GetInfo reply broke a documented bound (size, count, UTF-8, control characters).",
  BERTH_CLUSTER_NODE_CONFLICT:
    'Another berth instance publishes the same cluster node name to etcd; this one does not publish.',
  BERTH_CLUSTER_UNAVAILABLE: 'etcd could not be reached for the cluster view (publishing or reading).',
  BERTH_CLUSTER_DISABLED: 'The cluster view is not configured on this daemon (no `cluster:` section).',
  BERTH_DEVICES_UNAVAILABLE:
    'A device allocation cannot be met: the resource is not registered, or too few of its devices are healthy and free.',
  BERTH_ALLOCATION_EXISTS: 'The workload already holds an allocation of that device resource.',
  BERTH_ALLOCATION_NOT_FOUND: 'The workload holds no allocation of that device resource.',
  BERTH_CSI_DRIVER_NOT_FOUND:
    'No CSI driver of that name is registered, and berth holds no volumes or publications of it.',
  BERTH_CSI_DRIVER_UNAVAILABLE:
    'The CSI driver is not registered right now (berth still holds its volumes), or it answered Unavailable, DeadlineExceeded or Aborted; retry after the Retry-After seconds.',
  BERTH_CSI_VOLUME_NOT_FOUND:
    'The CSI volume or publication does not exist (berth has no record, or the driver answered NotFound).',
  BERTH_CSI_CONFLICT:
    'The CSI volume operation conflicts with its state: still published, published with other options, or the driver answered AlreadyExists or FailedPrecondition.',
  BERTH_CSI_CAPABILITY_MISSING:
    'The CSI driver does not offer the capability (or RPC) the volume operation needs.',
  BERTH_CSI_RESOURCE_EXHAUSTED:
    'The CSI driver answered ResourceExhausted (no capacity or attach slots left).',
  BERTH_CSI_INVALID_ARGUMENT:
    'The CSI driver rejected the request as invalid (InvalidArgument or OutOfRange).',
  BERTH_CSI_DRIVER_FAILED: 'A CSI driver call failed with another gRPC code (Internal, Unknown, ...).',
  BERTH_INTERNAL: 'An unexpected internal failure; the message and cause say more.',
} as const;

export type BerthErrorCode = keyof typeof ERROR_CODES;

export interface BerthErrorOptions {
  cause?: unknown;
  /** Extra machine-readable detail (e.g. retryAt for a backoff refusal). */
  details?: Record<string, unknown>;
}

/**
 * Marks BerthErrors through a registry-wide symbol rather than the class
 * identity, so an error made by one loaded copy of berth is recognised by
 * another (two versions in one node_modules tree, or a bundled copy).
 */
const BRAND: unique symbol = Symbol.for('berth.BerthError') as never;

/** What `BerthError.from` puts around a foreign error: a message prefix and details. */
export interface BerthErrorContext {
  /** Prefix of the message: "`<message>`: `<the original message>`". */
  message?: string;
  details?: Record<string, unknown>;
}

export class BerthError extends Error {
  readonly code: BerthErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: BerthErrorCode, message: string, options: BerthErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BerthError';
    this.code = code;
    this.details = options.details ?? {};
    Object.defineProperty(this, BRAND, { value: true });
  }

  /**
   * `err` itself if it already is a BerthError (from any copy of berth), else
   * a BerthError with `fallbackCode` whose cause is `err` (BERTH_ABORTED for
   * an AbortError, whatever the fallback). A string context is
   * the message prefix ("dial /x.sock failed" -> "dial /x.sock failed: ECONNREFUSED").
   */
  static from(err: unknown, fallbackCode: BerthErrorCode, context?: string | BerthErrorContext): BerthError {
    if (isBerthError(err)) return err;
    // An abort is an abort whatever the caller expected to go wrong (DOMException or Node's AbortError).
    const code = isAbortError(err) ? 'BERTH_ABORTED' : fallbackCode;
    const { message, details } =
      typeof context === 'string' ? { message: context, details: undefined } : (context ?? {});
    const text = message === undefined ? errorMessage(err) : `${message}: ${errorMessage(err)}`;
    return new BerthError(code, text, details === undefined ? { cause: err } : { cause: err, details });
  }

  /** `instanceof BerthError` holds for BerthErrors of every loaded copy (subclasses keep the normal check). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the receiver is the class `instanceof` asks about (maybe a subclass)
    if (this !== BerthError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return isBerthError(value);
  }

  toJSON(): { code: BerthErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** An abort: a DOMException or Node error named AbortError (what an aborted signal makes fetch, timers and streams throw). */
function isAbortError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'AbortError';
}

/** True for a BerthError made by any loaded copy of berth (optionally: with this code). */
export function isBerthError(err: unknown, code?: BerthErrorCode): err is BerthError {
  if (typeof err !== 'object' || err === null || (err as { [BRAND]?: unknown })[BRAND] !== true) return false;
  return code === undefined || (err as BerthError).code === code;
}

/** A readable message for anything thrown, without losing BerthError's text. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The code of an error if it is a BerthError, else BERTH_INTERNAL. */
export function errorCode(err: unknown): BerthErrorCode {
  return isBerthError(err) ? err.code : 'BERTH_INTERNAL';
}

export function abortedError(signal: AbortSignal | undefined, what: string): BerthError {
  return new BerthError('BERTH_ABORTED', `${what}: aborted`, { cause: signal?.reason });
}
