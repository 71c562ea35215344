import type { HandlerConfigOptions } from '../types.js';

/**
 * Defaults of the CSI handler and of the CSI volumes API, in one place.
 * `handlerOptions.CSIPlugin` in the config file overrides them (resolved to
 * milliseconds by the daemon).
 */
export const CSI_DEFAULTS = {
  /**
   * Deadline of the whole post-registration exchange (GetPluginInfo, Probe,
   * NodeGetCapabilities, NodeGetInfo): the kubelet's csiTimeout for
   * NodeGetInfo. A registration's own pluginClientTimeout wins. It also bounds
   * each single volume call (NodeStageVolume, ...), as the kubelet's csiTimeout does.
   */
  callTimeoutMs: 2 * 60_000,
  /**
   * Deadline of one whole volume operation (waiting for the volume's queue,
   * then every call it makes: e.g. ControllerPublish + NodeStage +
   * NodePublish). Past it the API answers 503 with Retry-After.
   */
  operationTimeoutMs: 5 * 60_000,
  /** The mount root under the data directory when `mountRoot` is not set: `<data-dir>/csi`. */
  mountRootDirName: 'csi',
} as const;

export interface CsiHandlerOptions {
  callTimeoutMs: number;
  operationTimeoutMs: number;
  /** Absolute path, or undefined for `<data-dir>/csi`. */
  mountRoot: string | undefined;
}

function positive(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** Reads `handlerOptions.CSIPlugin` (already typed by the config schema); unknown keys are ignored. */
export function csiOptions(raw: Readonly<Record<string, unknown>>): CsiHandlerOptions {
  return {
    callTimeoutMs: positive(raw.callTimeoutMs, CSI_DEFAULTS.callTimeoutMs),
    operationTimeoutMs: positive(raw.operationTimeoutMs, CSI_DEFAULTS.operationTimeoutMs),
    mountRoot: typeof raw.mountRoot === 'string' && raw.mountRoot !== '' ? raw.mountRoot : undefined,
  };
}

/** `handlerOptions.CSIPlugin` in the config file. */
export const CSI_CONFIG_OPTIONS: HandlerConfigOptions = {
  schema: ({ z, duration, text }) =>
    z.strictObject({
      callTimeout: duration.optional(),
      /** Bound of one whole volume operation (queue wait plus its driver calls). */
      operationTimeout: duration.optional(),
      /** Root of CSI staging and publish paths (default `<data-dir>/csi`); relative to the config file. */
      mountRoot: text.optional(),
    }),
  resolve: (section, fromFile) => {
    const options: Record<string, unknown> = {};
    if (section.callTimeout !== undefined) options.callTimeoutMs = section.callTimeout;
    if (section.operationTimeout !== undefined) options.operationTimeoutMs = section.operationTimeout;
    if (typeof section.mountRoot === 'string') options.mountRoot = fromFile(section.mountRoot);
    return options;
  },
};

/** `handlerOptions.csi-controller` in the config file: the deadline of its registration call. */
export const CSI_CONTROLLER_CONFIG_OPTIONS: HandlerConfigOptions = {
  schema: ({ z, duration }) => z.strictObject({ callTimeout: duration.optional() }),
  resolve: (section) => (section.callTimeout === undefined ? {} : { callTimeoutMs: section.callTimeout }),
};
