/**
 * HandlerServices for tests of a built-in handler: a clock of the test's
 * choice, and the events and facts it produces, recorded.
 */
import {
  type BerthMode,
  type Clock,
  type PluginEvent,
  silentLogger,
  systemClock,
} from '../../common/index.js';
import type { HandlerServices, InstanceRef } from '../../handlers/types.js';

export interface RecordingServices extends HandlerServices {
  readonly events: PluginEvent[];
  /** Every recordFacts call, in order. */
  readonly facts: Array<{ instance: InstanceRef; facts: Record<string, string> }>;
}

export function recordingServices(
  options: { clock?: Clock; options?: Record<string, unknown>; dataDir?: string; mode?: BerthMode } = {},
): RecordingServices {
  const events: PluginEvent[] = [];
  const facts: Array<{ instance: InstanceRef; facts: Record<string, string> }> = [];
  return {
    logger: silentLogger,
    clock: options.clock ?? systemClock,
    dataDir: options.dataDir ?? '/nonexistent-berth-data-dir',
    options: options.options ?? {},
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    events,
    facts,
    emit: (event) => events.push(event),
    recordFacts: (instance, recorded) => facts.push({ instance: { ...instance }, facts: { ...recorded } }),
  };
}
