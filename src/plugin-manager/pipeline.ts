import {
  type ActualStateOfWorldStore,
  createActualStateOfWorld,
  createDesiredStateOfWorld,
  type DesiredStateOfWorldStore,
  type PluginInfo,
} from '../cache/index.js';
import {
  BERTH_MODES,
  BerthError,
  type BerthMode,
  type Clock,
  DEFAULT_BERTH_MODE,
  type Logger,
  TurnBudget,
  WORK_SLICE_MS,
} from '../common/index.js';
import { createOperationExecutor, type OperationExecutor } from '../executor/index.js';
import { createHandlerTable, type HandlerTable } from '../handlers/index.js';
import { createReconciler, DEFAULT_RESYNC_PERIOD_MS, type Reconciler } from '../reconciler/index.js';
import type { DialRegistration, HeldConnection } from '../registration/types.js';
import { createPluginWatcher, type PluginWatcher } from '../watcher/index.js';
import type { ActualStateView, DesiredStateView, PluginManagerOptions } from './types.js';

/** The registration pipeline the plugin manager composes, built from its options. */
export interface Pipeline {
  mode: BerthMode;
  desired: DesiredStateOfWorldStore;
  actual: ActualStateOfWorldStore;
  handlers: HandlerTable;
  executor: OperationExecutor;
  reconciler: Reconciler;
  watcher: PluginWatcher;
  /** Read-only views of the two states, for the manager's users. */
  desiredView: DesiredStateView;
  actualView: ActualStateView;
}

function invalid(message: string): BerthError {
  return new BerthError('BERTH_INVALID_ARGUMENT', `plugin manager: ${message}`);
}

/**
 * Checks the options and builds watcher, desired and actual state, handler
 * table, executor and reconciler. Each part names itself under `base` (the
 * logger the manager was given), so a `component` binding never nests.
 */
export function buildPipeline(
  options: PluginManagerOptions,
  clock: Clock,
  base: Logger,
  dial: DialRegistration,
  holdConnection: (socketPath: string, uuid: string, connection: HeldConnection) => void,
): Pipeline {
  if (typeof options?.pluginsDir !== 'string' || options.pluginsDir === '') {
    throw invalid('pluginsDir must be a non-empty path');
  }
  const resyncPeriodMs = options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS;
  if (!Number.isFinite(resyncPeriodMs) || resyncPeriodMs <= 0) {
    throw invalid(`resyncPeriodMs must be a positive number of milliseconds, got ${String(resyncPeriodMs)}`);
  }
  const mode = options.mode ?? DEFAULT_BERTH_MODE;
  if (!BERTH_MODES.includes(mode)) {
    throw invalid(`mode must be one of ${BERTH_MODES.join(', ')}, got ${String(options.mode)}`);
  }
  const desired = createDesiredStateOfWorld({ clock, logger: base });
  const actual = createActualStateOfWorld({ logger: base });
  const handlers = createHandlerTable({ logger: base.child({ component: 'handlers' }) });
  // One event-loop turn's time, shared by the watcher's, the reconciler's and the attempts' work.
  const turn = new TurnBudget(WORK_SLICE_MS);
  const executor = createOperationExecutor({
    ...definedOnly({
      timeouts: options.timeouts,
      backoff: options.backoff,
      maxConcurrentRegistrations: options.maxConcurrentRegistrations,
      youngSocketRetry: options.youngSocketRetry,
      slotBudgets: options.slotBudgets,
    }),
    clock,
    logger: base.child({ component: 'operation-executor' }),
    dial,
    mode,
    holdConnection,
    turn,
  });
  const reconciler = createReconciler({
    desiredState: desired,
    actualState: actual,
    executor,
    handlers,
    clock,
    logger: base.child({ component: 'reconciler' }),
    resyncPeriodMs,
    turn,
  });
  const watcher = createPluginWatcher({
    ...definedOnly({
      deprecatedDir: options.deprecatedPluginsDir,
      rescanIntervalMs: options.rescanIntervalMs,
      useFsWatch: options.useFsWatch,
    }),
    dir: options.pluginsDir,
    desiredState: desired,
    clock,
    logger: base,
    // An observer writes nothing into the directory it watches, not even to create it.
    createMissing: mode !== 'observe',
    turn,
  });
  const desiredView: DesiredStateView = Object.freeze({
    getPluginsToRegister: () => desired.getPluginsToRegister(),
    pluginExists: (socketPath: string) => desired.pluginExists(socketPath),
    get: (socketPath: string) => desired.get(socketPath),
  });
  const actualView: ActualStateView = Object.freeze({
    getRegisteredPlugins: () => actual.getRegisteredPlugins(),
    pluginExists: (socketPath: string) => actual.pluginExists(socketPath),
    pluginExistsWithCorrectUUID: (info: PluginInfo) => actual.pluginExistsWithCorrectUUID(info),
    get: (socketPath: string) => actual.get(socketPath),
  });
  return { mode, desired, actual, handlers, executor, reconciler, watcher, desiredView, actualView };
}

/** The entries whose value is defined (exactOptionalPropertyTypes: an option is absent, not undefined). */
function definedOnly<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
