import {
  type BackoffPolicy,
  type BackoffSetting,
  BerthError,
  backoffProblem,
  type Clock,
  type Logger,
  type PluginEvent,
  silentLogger,
  systemClock,
} from '../common/index.js';
import type { RegistryStorage } from '../storage/index.js';
import type { PluginDispenser } from './types.js';

export interface RegistryOptions {
  /**
   * Where the registry persists every change (one row per instance); restored
   * from on start. The registry starts it (start is idempotent) but never stops
   * it: its owner does, after the registry.
   */
  storage?: RegistryStorage;
  /** Dispensers by plugin type. */
  dispensers?: Record<string, PluginDispenser>;
  /** Used for any type without an entry in `dispensers` (berth's plugins all speak gRPC on a socket). */
  defaultDispenser?: PluginDispenser;
  clock?: Clock;
  logger?: Logger;
  /** Per-subscriber queue bound; when exceeded the subscriber gets a `lagged` event. Default: unbounded. */
  subscriberQueueSize?: number;
  /** Sees every registered/updated/deregistered/storage-error event (the daemon's tap). */
  onEvent?: (event: PluginEvent) => void;
  /** waitForPlugin's safety-net poll; false polls never (events alone wake it). */
  waitPoll?: BackoffSetting;
  /** How a failing storage is retried (pending deregistrations, then a probe) until a write lands. */
  storageRetry?: BackoffSetting;
  /**
   * Told once writes work again after failing (the plugin node retries the
   * registrations that were refused for the storage at once, not after their backoff).
   */
  onStorageRecovered?: () => void;
  /**
   * Most changes in one transaction. Bounds the event-loop time spent on one
   * batch (planning it, handing it to the writer, publishing its events); a
   * larger burst is committed as several transactions back to back.
   */
  maxBatch?: number;
}

/** The registry's defaults, in one place. */
export const REGISTRY_DEFAULTS: {
  readonly waitPoll: BackoffPolicy;
  readonly storageRetry: BackoffPolicy;
  readonly maxBatch: number;
} = {
  // Nomad's WaitForPlugin: 200 ms, doubling, capped at 5 s.
  waitPoll: { initialMs: 200, maxMs: 5000, factor: 2 },
  // A probe is one small transaction; capped at 2 s so a disk freed of space is noticed within 2 s.
  storageRetry: { initialMs: 250, maxMs: 2000, factor: 2 },
  // A few ms of main-thread work per batch (plan, hand-off, events); fsyncs are amortised well before that.
  maxBatch: 128,
};

/** The gRPC dispenser's defaults. */
export const GRPC_DISPENSER_DEFAULTS = {
  /** How long a new client may take to become ready (ms). */
  readyTimeoutMs: 5000,
} as const;

export interface ResolvedRegistryOptions {
  storage: RegistryStorage | undefined;
  dispensers: Map<string, PluginDispenser>;
  defaultDispenser: PluginDispenser | undefined;
  clock: Clock;
  logger: Logger;
  subscriberQueueSize: number | undefined;
  onEvent: ((event: PluginEvent) => void) | undefined;
  waitPoll: BackoffSetting;
  storageRetry: BackoffSetting;
  onStorageRecovered: (() => void) | undefined;
  maxBatch: number;
}

export function resolveRegistryOptions(options: RegistryOptions): ResolvedRegistryOptions {
  const queueSize = options.subscriberQueueSize;
  if (queueSize !== undefined) checkQueueSize(queueSize, 'subscriberQueueSize');
  const waitPoll = options.waitPoll ?? REGISTRY_DEFAULTS.waitPoll;
  const storageRetry = options.storageRetry ?? REGISTRY_DEFAULTS.storageRetry;
  checkBackoff(waitPoll, 'waitPoll');
  checkBackoff(storageRetry, 'storageRetry');
  const maxBatch = options.maxBatch ?? REGISTRY_DEFAULTS.maxBatch;
  checkQueueSize(maxBatch, 'maxBatch');
  return {
    storage: options.storage,
    dispensers: new Map(Object.entries(options.dispensers ?? {})),
    defaultDispenser: options.defaultDispenser,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? silentLogger,
    subscriberQueueSize: queueSize,
    onEvent: options.onEvent,
    waitPoll,
    storageRetry,
    onStorageRecovered: options.onStorageRecovered,
    maxBatch,
  };
}

export function checkQueueSize(size: number, what: string): void {
  if (!Number.isInteger(size) || size < 1) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `${what} must be a positive integer, got ${size}`);
  }
}

function checkBackoff(setting: BackoffSetting, what: string): void {
  const problem = backoffProblem(setting);
  if (problem !== undefined) throw new BerthError('BERTH_INVALID_ARGUMENT', `registry ${what}: ${problem}`);
}
