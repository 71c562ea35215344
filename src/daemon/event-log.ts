import type { Clock, Logger, PluginEvent } from '../common/index.js';

/**
 * Device snapshots that changed are logged at info at most once per resource
 * per this many ms; the others go to debug, and the next info line counts
 * them. A plugin that flaps its devices every 20 ms (4,096 of them) wrote a
 * 1 KB info line 37 times a second; now at most one line a resource per 10 s.
 */
export const SNAPSHOT_INFO_EVERY_MS = 10_000;
/** Device IDs an info line names (the event itself carries up to 100). */
const IDS_LOGGED = 8;

/** Logs daemon events at a level fitting what they mean to an operator (see logEvent). */
export function createEventLog(logger: Logger, clock: Clock): (event: PluginEvent) => void {
  const lastInfo = new Map<string, { at: number; folded: number }>();
  return (event) => {
    if (event.type !== 'devices-changed' || event.reason !== 'snapshot') {
      if (event.type === 'devices-changed' && event.reason === 'removed') lastInfo.delete(event.resource);
      logEvent(logger, event);
      return;
    }
    const now = clock.now();
    const last = lastInfo.get(event.resource);
    const fields = {
      resource: event.resource,
      healthy: event.healthy,
      unhealthy: event.unhealthy,
      changed: event.changed.slice(0, IDS_LOGGED),
      changedCount: event.changed.length,
    };
    if (last !== undefined && now - last.at < SNAPSHOT_INFO_EVERY_MS) {
      last.folded += 1;
      logger.debug(fields, 'devices snapshot');
      return;
    }
    const folded = last?.folded ?? 0;
    lastInfo.set(event.resource, { at: now, folded: 0 });
    logger.info(
      folded === 0 ? fields : { ...fields, foldedSnapshots: folded },
      folded === 0
        ? 'devices snapshot'
        : `devices snapshot (${folded} more changed snapshots since the last line, logged at debug)`,
    );
  };
}

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
