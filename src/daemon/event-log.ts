import type { Logger, PluginEvent } from '../common/index.js';

/** Logs one daemon event at a level fitting what it means to an operator. */
export function logEvent(logger: Logger, event: PluginEvent): void {
  switch (event.type) {
    case 'registered':
    case 'updated':
    case 'deregistered':
      logger.info(
        { type: event.plugin.type, name: event.plugin.name, socketPath: event.plugin.allocId },
        `plugin ${event.type}`,
      );
      return;
    case 'failed':
      logger.warn(
        {
          socketPath: event.socketPath,
          plugin: event.plugin,
          code: event.error.code,
          attempts: event.attempts,
          retryAt: event.retryAt === null ? null : new Date(event.retryAt).toISOString(),
        },
        `plugin registration failed: ${event.error.message}`,
      );
      return;
    case 'discovered':
    case 'socket-removed':
      logger.debug(
        { socketPath: event.socketPath },
        `socket ${event.type === 'discovered' ? 'discovered' : 'removed'}`,
      );
      return;
    case 'storage-error':
      logger.error({ code: event.error.code, path: event.path }, `state storage: ${event.error.message}`);
      return;
    case 'devices-changed':
      logger.info(
        {
          resource: event.resource,
          healthy: event.healthy,
          unhealthy: event.unhealthy,
          changed: event.changed,
        },
        `devices ${event.reason}`,
      );
      return;
    case 'lagged':
      return;
    case 'driver-unusable':
      logger.warn(
        { type: event.plugin.type, name: event.plugin.name, since: new Date(event.since).toISOString() },
        'driver unusable: no instance connected',
      );
      return;
  }
}
