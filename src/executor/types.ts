import type { ActualStateOfWorld, PluginInfo } from '../cache/types.js';
import type {
  BackoffSetting,
  BerthError,
  BerthMode,
  Clock,
  Lifecycle,
  Logger,
  TurnBudget,
} from '../common/index.js';
import type { PluginHandler } from '../handlers/types.js';
import type { DialRegistration, HeldConnection } from '../registration/types.js';
import type { ExecutorTimeouts, SlotBudgets, YoungSocketRetry } from './executor-options.js';
import type { LaneUsage } from './lanes.js';
import type { OperationStatus, RunRefusal } from './operation-map.js';

export { DEFAULT_EXECUTOR_TIMEOUTS, type ExecutorTimeouts } from './executor-options.js';

/** The desired-state generation a register operation works on. */
export interface PluginGeneration {
  uuid: string;
  timestamp: number;
  foundInDeprecatedDir: boolean;
}

export type HandlerLookup = (type: string) => PluginHandler | undefined;

/** What the executor reports as operations settle (refusals are thrown by the calls, not reported). */
export type OperationEvent =
  | {
      type: 'register-succeeded';
      at: number;
      socketPath: string;
      /** The actual-state entry that was added. */
      plugin: PluginInfo;
      durationMs: number;
      attempts: number;
    }
  | {
      type: 'register-failed';
      at: number;
      socketPath: string;
      generation: string;
      error: BerthError;
      /** Known once GetInfo answered. */
      plugin?: { type: string; name: string };
      /** When a retry is permitted (strictly after); null if the executor keeps no backoff. */
      retryAt: number | null;
      attempts: number;
      durationMs: number;
    }
  | { type: 'unregister-succeeded'; at: number; socketPath: string; plugin: PluginInfo; durationMs: number }
  | {
      type: 'unregister-failed';
      at: number;
      socketPath: string;
      plugin: PluginInfo;
      error: BerthError;
      retryAt: number | null;
      attempts: number;
      durationMs: number;
    };

export interface OperationExecutorOptions {
  clock: Clock;
  logger: Logger;
  dial: DialRegistration;
  timeouts?: Partial<ExecutorTimeouts>;
  /** Retry policy per socket after a failed operation. Default 500 ms doubling to 122 s; false: none. */
  backoff?: BackoffSetting;
  /** Registration handshakes (dial, HTTP/2, GetInfo, validation) holding a slot at once. Default 64. */
  maxConcurrentRegistrations?: number;
  /** How long an attempt may hold a slot, the per-type and slow lanes (executor-options.ts). */
  slotBudgets?: Partial<SlotBudgets>;
  /** Quick redials of a freshly bound socket that refuses (see executor-options.ts); false: none. */
  youngSocketRetry?: YoungSocketRetry | false;
  /** `observe`: register attempts send no NotifyRegistrationStatus (register-operation.ts). Default registrar. */
  mode?: BerthMode;
  /**
   * Takes a registered plugin's handshake connection for liveness (before the
   * 'registered' event), so the plugin is not connected to twice. Without it
   * the connection is closed, as the kubelet does.
   */
  holdConnection?: HoldConnection;
  /** @internal The event-loop turn shared with the pipeline's other parts (default: one of its own). */
  turn?: TurnBudget;
  onEvent?: (event: OperationEvent) => void;
}

export type HoldConnection = (socketPath: string, uuid: string, connection: HeldConnection) => void;

/**
 * Starts register and unregister operations (kubelet `OperationExecutor`).
 * Both are keyed by socket path in one operation map, so at most one runs per
 * path and they share its backoff. The calls never wait for the operation:
 * they throw BERTH_OPERATION_PENDING / BERTH_OPERATION_BACKOFF refusals, and
 * results show up in the actual state and as OperationEvents.
 */
export interface OperationExecutor extends Lifecycle {
  /** Like registerPlugin, but returns the refusal as a value (undefined: started). */
  tryRegisterPlugin(
    socketPath: string,
    generation: PluginGeneration,
    getHandler: HandlerLookup,
    asw: ActualStateOfWorld,
  ): RunRefusal | undefined;
  /** Like unregisterPlugin, but returns the refusal as a value (undefined: started). */
  tryUnregisterPlugin(info: PluginInfo, asw: ActualStateOfWorld): RunRefusal | undefined;
  registerPlugin(
    socketPath: string,
    generation: PluginGeneration,
    getHandler: HandlerLookup,
    asw: ActualStateOfWorld,
  ): void;
  unregisterPlugin(info: PluginInfo, asw: ActualStateOfWorld): void;
  isPending(socketPath: string): boolean;
  /** Register and unregister operations running now. */
  readonly running: number;
  status(socketPath: string): OperationStatus | undefined;
  /** Slots held and waited for in each registration lane (lanes.ts), and the offenders. */
  laneUsage(): LaneUsage;
  /** Socket paths with a running operation or a remembered failure. */
  keys(): string[];
  resetBackoff(socketPath: string): boolean;
  /** Subscribes to OperationEvents; returns an unsubscribe function. */
  addListener(listener: (event: OperationEvent) => void): () => void;
  wait(): Promise<void>;
  waitForCompletion(): Promise<void>;
  /**
   * Aborts running operations (their RPCs end at once), refuses new ones and
   * resolves once every running operation has settled. Idempotent, memoised.
   */
  stop(): Promise<void>;
}
