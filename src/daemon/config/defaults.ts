import { DEFAULT_BERTH_MODE } from '../../common/index.js';
import { DEFAULT_EXECUTOR_BACKOFF, DEFAULT_EXECUTOR_TIMEOUTS } from '../../executor/executor-options.js';
import {
  DEFAULT_CHANGE_DETECTION_STRATEGY,
  DEFAULT_MAX_POD_BYTES,
  DEFAULT_MAX_PODS,
  DEFAULT_MAX_REFERENCES_PER_POD,
  DEFAULT_OBJECT_TTL_MS,
} from '../../objects/objects-options.js';
import { DEFAULT_LIVENESS } from '../../plugin-manager/liveness-options.js';
import { DEFAULT_RESYNC_PERIOD_MS } from '../../reconciler/reconciler-options.js';
import { DEFAULT_RESCAN_INTERVAL_MS } from '../../watcher/plugin-watcher-options.js';
import { DEFAULT_EVENT_RING_SIZE } from '../event-bus-options.js';

/**
 * Every default of the daemon, in one place. A component's own default is
 * imported from its `*-options.ts` (light modules: constants only), never
 * restated; defaults.test.ts fails if the two ever disagree. The file layout
 * under the data directory is part of berth's external contract (DESIGN.md).
 */
export const DEFAULTS = {
  logLevel: 'info',
  /** registrar: berth registers the directory's plugins (observe: it only watches another registrar's). */
  mode: DEFAULT_BERTH_MODE,
  /** A registrar refuses a directory a running kubelet seems to own unless forced. */
  force: false,
  logFormat: 'auto',
  resyncPeriodMs: DEFAULT_RESYNC_PERIOD_MS,
  rescanIntervalMs: DEFAULT_RESCAN_INTERVAL_MS,
  dialTimeoutMs: DEFAULT_EXECUTOR_TIMEOUTS.dialMs,
  getInfoTimeoutMs: DEFAULT_EXECUTOR_TIMEOUTS.getInfoMs,
  notifyTimeoutMs: DEFAULT_EXECUTOR_TIMEOUTS.notifyMs,
  /** A socket's retry after a failed registration: the kubelet's 500 ms doubling to 2m2s. */
  backoff: DEFAULT_EXECUTOR_BACKOFF,
  livenessEnabled: true,
  livenessPeriodMs: DEFAULT_LIVENESS.periodMs,
  livenessTimeoutMs: DEFAULT_LIVENESS.timeoutMs,
  livenessFailureThreshold: DEFAULT_LIVENESS.failureThreshold,
  livenessPingsPerPeriod: DEFAULT_LIVENESS.pingsPerPeriod,
  /**
   * The daemon bounds each registry subscriber (the library's registry leaves
   * them unbounded): a daemon's subscribers are its API clients.
   */
  subscriberQueueSize: 1024,
  objectStrategy: DEFAULT_CHANGE_DETECTION_STRATEGY,
  objectTtlMs: DEFAULT_OBJECT_TTL_MS,
  maxPods: DEFAULT_MAX_PODS,
  maxReferencesPerPod: DEFAULT_MAX_REFERENCES_PER_POD,
  maxPodBytes: DEFAULT_MAX_POD_BYTES,
  shutdownTimeoutMs: 10_000,
  /** Events held for one slow /v1/events client before older ones are dropped (a `lagged` marker says so). */
  sseQueueSize: 1024,
  sseHeartbeatMs: 15_000,
  /** Largest accepted request body (PUT /v1/pods). */
  bodyLimitBytes: 1024 * 1024,
  /** Open API connections per listener (unix socket, TCP); keeps fds free for plugin dials. */
  apiMaxConnections: 256,
  /** Event-stream clients at once, per listener (the unix socket and TCP each have this many). */
  apiMaxEventStreams: 64,
  /** Recent events kept per stream route for clients that reconnect with Last-Event-ID. */
  apiEventRingSize: DEFAULT_EVENT_RING_SIZE,
  /** Unread bytes one /v1/events client may leave before it is cut off with `lagged`. */
  apiEventStreamBufferBytes: 1024 * 1024,
  /** Time a client has to send its request headers. */
  apiHeadersTimeoutMs: 10_000,
  /** A connection idle this long is closed (event streams send a heartbeat every 15 s). */
  apiIdleTimeoutMs: 60_000,
  /** TCP connections without credentials yet, per listener; over it the oldest idle one is closed. */
  apiMaxUnauthenticatedConnections: 64,
  /** A TCP connection without credentials yet is closed after this long idle. */
  apiUnauthenticatedIdleTimeoutMs: 5_000,
} as const;

/** Log levels `--log-level` and `logLevel` accept (pino's). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * Log formats `--log-format` and `logFormat` accept: `json` (one object per
 * line), `text` (one readable line per event), `auto` (text when stderr is a
 * terminal, else json).
 */
export const LOG_FORMATS = ['auto', 'json', 'text'] as const;

/** The plugin type `berth example-plugin` registers with; the daemon accepts it out of the box. */
export const EXAMPLE_PLUGIN_TYPE = 'example.com/berth-example';
export const EXAMPLE_PLUGIN_VERSIONS: readonly string[] = EXAMPLE_VERSIONS;

/** Plugin types with a built-in handler that a config file cannot replace (the handlers' own table). */
export { BUILTIN_HANDLER_TYPES } from '../../handlers/builtin-handlers.js';

export {
  type DefaultPaths,
  dataDirLayout,
  defaultApiSocket,
  defaultDataDir,
  defaultPaths,
  type Env,
  type PathContext,
  type PathScope,
  SYSTEM_PATHS,
} from './paths.js';

import { EXAMPLE_VERSIONS } from '../../registration/registration-options.js';
