import type { HandlerConfigOptions } from '../types.js';

/**
 * Defaults of the DRA handler, in one place. `handlerOptions.DRAPlugin` in
 * the config file overrides them (resolved to milliseconds by the daemon).
 */
export const DRA_DEFAULTS = {
  /** How long a driver may have no connected instance before `driver-unusable` (the kubelet's wipingDelay). */
  wipeDelayMs: 30_000,
  /** Deadline of one NodePrepareResources/NodeUnprepareResources call (the kubelet's defaultClientCallTimeout). */
  callTimeoutMs: 45_000,
  /** Most claims one prepare/unprepare request may carry (an API bound; the kubelet has none). */
  maxClaimsPerCall: 1024,
} as const;

export interface DraHandlerOptions {
  wipeDelayMs: number;
  callTimeoutMs: number;
  maxClaimsPerCall: number;
}

function positive(value: unknown, fallback: number, allowZero = false): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fallback;
  return value > 0 || (allowZero && value === 0) ? value : fallback;
}

/** Reads `handlerOptions.DRAPlugin` (already typed by the config schema); unknown keys are ignored. */
export function draOptions(raw: Readonly<Record<string, unknown>>): DraHandlerOptions {
  return {
    wipeDelayMs: positive(raw.wipeDelayMs, DRA_DEFAULTS.wipeDelayMs, true),
    callTimeoutMs: positive(raw.callTimeoutMs, DRA_DEFAULTS.callTimeoutMs),
    maxClaimsPerCall: positive(raw.maxClaimsPerCall, DRA_DEFAULTS.maxClaimsPerCall),
  };
}

/** `handlerOptions.DRAPlugin` in the config file. */
export const DRA_CONFIG_OPTIONS: HandlerConfigOptions = {
  schema: ({ z, duration, positiveInt }) =>
    z.strictObject({
      wipeDelay: duration.optional(),
      callTimeout: duration.optional(),
      maxClaimsPerCall: positiveInt.optional(),
    }),
  resolve: (section) => {
    const options: Record<string, unknown> = {};
    if (section.wipeDelay !== undefined) options.wipeDelayMs = section.wipeDelay;
    if (section.callTimeout !== undefined) options.callTimeoutMs = section.callTimeout;
    if (section.maxClaimsPerCall !== undefined) options.maxClaimsPerCall = section.maxClaimsPerCall;
    return options;
  },
};
