import type { PluginInfo } from '../cache/index.js';
import type { BerthMode, Logger } from '../common/index.js';
import type { OperationEvent } from '../executor/index.js';
import type { PluginManagerEvent, RegisteredPlugin } from './types.js';

export type FailedEvent = Extract<PluginManagerEvent, { type: 'failed' }>;

type FailedOperation = Extract<OperationEvent, { type: 'register-failed' | 'unregister-failed' }>;

/** A registered plugin instance as the manager reports it. */
export function registeredPlugin(info: PluginInfo, registeredAt: number, mode: BerthMode): RegisteredPlugin {
  return {
    socketPath: info.socketPath,
    type: info.type ?? '',
    name: info.name ?? '',
    endpoint: info.endpoint ?? info.socketPath,
    versions: [...(info.supportedVersions ?? [])],
    uuid: info.uuid,
    foundInDeprecatedDir: info.foundInDeprecatedDir,
    registeredAt,
    observed: mode === 'observe',
  };
}

/** The 'failed' event of a failed attempt (logged at warn when `logger` is given). */
export function failedEvent(event: FailedOperation, logger: Logger | undefined): FailedEvent {
  const failed: FailedEvent = {
    type: 'failed',
    at: event.at,
    socketPath: event.socketPath,
    error: { code: event.error.code, message: event.error.message },
    retryAt: event.retryAt,
    attempts: event.attempts,
  };
  const plugin =
    event.type === 'register-failed'
      ? event.plugin
      : event.plugin.type !== undefined && event.plugin.name !== undefined
        ? { type: event.plugin.type, name: event.plugin.name }
        : undefined;
  if (plugin !== undefined) failed.plugin = plugin;
  logger?.warn(
    {
      socketPath: event.socketPath,
      code: event.error.code,
      retryAt: event.retryAt === null ? null : new Date(event.retryAt).toISOString(),
      attempts: event.attempts,
    },
    event.error.message,
  );
  return failed;
}

/** Whether `code` is the error's own or one of its causes' (a handler's failure wraps the registry's). */
export function causedBy(error: unknown, code: string): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if ((e as { code?: unknown }).code === code) return true;
  }
  return false;
}
