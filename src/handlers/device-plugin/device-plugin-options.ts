/**
 * Every default of the device plugin manager, in one place, and the bounds on
 * what a plugin or an API caller may send.
 */
import {
  BerthError,
  type Clock,
  type Logger,
  type PluginEvent,
  silentLogger,
  systemClock,
} from '../../common/index.js';
import type { HandlerConfigOptions } from '../types.js';

/** Where the legacy registration socket lives by default (under the data dir), and its file name. */
export { DEVICE_PLUGIN_LEGACY_SOCKET as LEGACY_SOCKET } from '../types.js';

/** The device plugin API versions berth's device manager speaks (the kubelet's SupportedVersions). */
export const SUPPORTED_DEVICE_PLUGIN_VERSIONS: readonly string[] = ['v1beta1'];

export const DEVICE_PLUGIN_DEFAULTS = {
  /** The kubelet's endpointStopGracePeriod: a disconnected resource is kept (unhealthy) this long. */
  gracePeriodMs: 5 * 60_000,
  /** The kubelet dials for 10 s with a blocking dial. */
  dialTimeoutMs: 10_000,
  /** The kubelet calls GetDevicePluginOptions with no deadline; berth gives it one. */
  optionsTimeoutMs: 10_000,
  /** GetPreferredAllocation and Allocate (the kubelet uses no deadline for Allocate). */
  allocateTimeoutMs: 30_000,
  /** The kubelet's KubeletPreStartContainerRPCTimeoutInSecs. */
  preStartTimeoutMs: 30_000,
  /** Largest snapshot (device count) accepted from one ListAndWatch message. */
  maxDevicesPerResource: 4096,
  /** Largest ListAndWatch message accepted, in bytes. */
  maxMessageBytes: 4 * 1024 * 1024,
  /** Largest `count` one allocation may ask for. */
  maxAllocationCount: 1024,
} as const;

/** Device IDs are at most 63 characters (the API's documented limit). */
export const MAX_DEVICE_ID_LENGTH = 63;
/** Workload names: 1-253 characters of [A-Za-z0-9._:-]. */
export const WORKLOAD_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,252}$/;

export interface DevicePluginManagerOptions {
  /** The SQLite file that keeps allocations (e.g. `<data-dir>/devices.db`); ':memory:' for tests. */
  databasePath: string;
  /**
   * The directory of the legacy registration socket (`kubelet.sock`); endpoints in a
   * RegisterRequest are relative to it. Undefined: no legacy socket is served.
   */
  socketDir?: string;
  clock?: Clock;
  logger?: Logger;
  /** devices-changed, and storage-error for allocation rows that cannot be read. */
  onEvent?: (event: PluginEvent) => void;
  /**
   * Where plugins registered through the legacy socket are recorded (the
   * daemon's registry, as a DevicePlugin instance like one from the plugins
   * directory). `registered` runs inside the plugin's Register call, so the
   * plugin hears success only once the record is made.
   */
  legacyRecord?: LegacyRecord;
  gracePeriodMs?: number;
  dialTimeoutMs?: number;
  optionsTimeoutMs?: number;
  allocateTimeoutMs?: number;
  preStartTimeoutMs?: number;
  maxDevicesPerResource?: number;
  maxMessageBytes?: number;
  maxAllocationCount?: number;
  /**
   * Observe mode: another registrar (the kubelet) owns these plugins. Only
   * read-only calls (GetDevicePluginOptions, ListAndWatch); allocate and
   * release are refused with BERTH_OBSERVE_ONLY; views are flagged observed.
   * Give no socketDir with it (the kubelet serves kubelet.sock).
   */
  observe?: boolean;
}

export type ResolvedDevicePluginManagerOptions = Required<
  Omit<DevicePluginManagerOptions, 'socketDir' | 'onEvent' | 'observe' | 'legacyRecord'>
> &
  Pick<DevicePluginManagerOptions, 'socketDir' | 'onEvent' | 'observe' | 'legacyRecord'>;

/** A record of the plugins registered through the legacy socket, by resource and endpoint. */
export interface LegacyRecord {
  registered(resource: string, endpoint: string): Promise<void>;
  gone(resource: string, endpoint: string): Promise<void>;
}

/** `handlerOptions.DevicePlugin` as the daemon resolved it (paths absolute, durations in ms). */
export interface DevicePluginHandlerOptions {
  /** undefined: `<dataDir>/device-plugins`; false: no legacy socket. */
  socketDir?: string | false;
  gracePeriodMs?: number;
}

/** Reads `handlerOptions.DevicePlugin` (already checked by the config schema); anything else is ignored. */
export function devicePluginHandlerOptions(
  raw: Readonly<Record<string, unknown>>,
): DevicePluginHandlerOptions {
  const out: DevicePluginHandlerOptions = {};
  if (raw.socketDir === false || (typeof raw.socketDir === 'string' && raw.socketDir !== '')) {
    out.socketDir = raw.socketDir;
  }
  const grace = raw.gracePeriodMs;
  if (typeof grace === 'number' && Number.isFinite(grace) && grace > 0) out.gracePeriodMs = grace;
  return out;
}

/** `handlerOptions.DevicePlugin` in the config file. */
export const DEVICE_PLUGIN_CONFIG_OPTIONS: HandlerConfigOptions = {
  schema: ({ z, duration, text }) =>
    z.strictObject({
      /** Where berth serves the legacy kubelet.sock; `false` serves none. */
      socketDir: z
        .union([text, z.literal(false)], { error: () => 'expected a directory path or false' })
        .optional(),
      gracePeriod: duration.optional(),
    }),
  resolve: (section, fromFile) => {
    const options: Record<string, unknown> = {};
    if (section.socketDir === false) options.socketDir = false;
    else if (typeof section.socketDir === 'string') options.socketDir = fromFile(section.socketDir);
    if (section.gracePeriod !== undefined) options.gracePeriodMs = section.gracePeriod;
    return options;
  },
};

/** Fills the manager's options from DEVICE_PLUGIN_DEFAULTS and checks them. */
export function resolveDevicePluginManagerOptions(
  options: DevicePluginManagerOptions,
): ResolvedDevicePluginManagerOptions {
  if (typeof options.databasePath !== 'string' || options.databasePath === '') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'device plugin manager: databasePath must be a file path');
  }
  const d = DEVICE_PLUGIN_DEFAULTS;
  const resolved: ResolvedDevicePluginManagerOptions = {
    databasePath: options.databasePath,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? silentLogger,
    gracePeriodMs: options.gracePeriodMs ?? d.gracePeriodMs,
    dialTimeoutMs: options.dialTimeoutMs ?? d.dialTimeoutMs,
    optionsTimeoutMs: options.optionsTimeoutMs ?? d.optionsTimeoutMs,
    allocateTimeoutMs: options.allocateTimeoutMs ?? d.allocateTimeoutMs,
    preStartTimeoutMs: options.preStartTimeoutMs ?? d.preStartTimeoutMs,
    maxDevicesPerResource: options.maxDevicesPerResource ?? d.maxDevicesPerResource,
    maxMessageBytes: options.maxMessageBytes ?? d.maxMessageBytes,
    maxAllocationCount: options.maxAllocationCount ?? d.maxAllocationCount,
    ...(options.observe === true ? { observe: true } : {}),
  };
  for (const key of [
    'gracePeriodMs',
    'dialTimeoutMs',
    'optionsTimeoutMs',
    'allocateTimeoutMs',
    'preStartTimeoutMs',
    'maxDevicesPerResource',
    'maxMessageBytes',
    'maxAllocationCount',
  ] as const) {
    const value = resolved[key];
    if (!Number.isFinite(value) || value <= 0) {
      throw new BerthError(
        'BERTH_INVALID_ARGUMENT',
        `device plugin manager: ${key} must be a positive number, got ${String(value)}`,
      );
    }
  }
  if (options.socketDir !== undefined) resolved.socketDir = options.socketDir;
  if (options.onEvent !== undefined) resolved.onEvent = options.onEvent;
  if (options.legacyRecord !== undefined) resolved.legacyRecord = options.legacyRecord;
  return resolved;
}
