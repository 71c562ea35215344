/**
 * Defaults of the CSI handler, in one place. `handlerOptions.CSIPlugin` in
 * the config file overrides them (resolved to milliseconds by the daemon).
 */
export const CSI_DEFAULTS = {
  /**
   * Deadline of the whole post-registration exchange (GetPluginInfo, Probe,
   * NodeGetCapabilities, NodeGetInfo): the kubelet's csiTimeout for
   * NodeGetInfo. A registration's own pluginClientTimeout wins.
   */
  callTimeoutMs: 2 * 60_000,
} as const;

export interface CsiHandlerOptions {
  callTimeoutMs: number;
}

/** Reads `handlerOptions.CSIPlugin` (already typed by the config schema); unknown keys are ignored. */
export function csiOptions(raw: Readonly<Record<string, unknown>>): CsiHandlerOptions {
  const timeout = raw.callTimeoutMs;
  return {
    callTimeoutMs:
      typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0
        ? timeout
        : CSI_DEFAULTS.callTimeoutMs,
  };
}
