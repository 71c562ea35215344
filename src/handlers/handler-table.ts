/**
 * The table of plugin handlers by plugin type (the kubelet's handler map,
 * which may gain entries while the plugin manager runs).
 *
 * `get` hands out a wrapper that makes the seed's state machine hold per
 * plugin: validate -> register -> deregister calls for one (type, name) run
 * one at a time, in call order, even when several sockets carry that name.
 * The kubelet serialises per socket path only, which lets two instances of
 * one name race inside a handler; berth does not.
 */
import { BerthError, errorMessage, type Logger, silentLogger } from '../common/index.js';
import { SerialQueues } from './serial-queues.js';
import type { PluginCallContext, PluginHandler, RegisterContext } from './types.js';

export interface HandlerTableOptions {
  /** Told about listeners that throw. */
  logger?: Logger;
}

export interface HandlerTable {
  /** Adds or replaces the handler for `type`; may be called while plugins are being registered. */
  add(type: string, handler: PluginHandler): void;
  /** Removes the handler for `type`; returns whether there was one. */
  remove(type: string): boolean;
  /** The serialising wrapper around the handler for `type` (the same object until the handler changes). */
  get(type: string): PluginHandler | undefined;
  has(type: string): boolean;
  types(): string[];
  /** Called after every add (e.g. to retry plugins that failed for lack of a handler). Returns an unsubscribe. */
  onAdded(listener: (type: string) => void): () => void;
}

interface Entry {
  handler: PluginHandler;
  wrapper: PluginHandler;
}

export function createHandlerTable(options: HandlerTableOptions = {}): HandlerTable {
  const logger = options.logger ?? silentLogger;
  const entries = new Map<string, Entry>();
  const listeners = new Set<(type: string) => void>();
  // Keyed by type and name, not by handler: a replacement handler still waits
  // for calls the previous one is running for the same plugin.
  const queues = new SerialQueues();

  const wrap = (type: string, handler: PluginHandler): PluginHandler => {
    const key = (name: string) => `${type}\u0000${name}`;
    return {
      validatePlugin: (name: string, endpoint: string, versions: string[], context: PluginCallContext) =>
        queues.run(key(name), () => handler.validatePlugin(name, endpoint, versions, context)),
      registerPlugin: (name: string, endpoint: string, versions: string[], context: RegisterContext) =>
        queues.run(key(name), () => handler.registerPlugin(name, endpoint, versions, context)),
      deRegisterPlugin: (name: string, endpoint: string, context: PluginCallContext) =>
        queues.run(key(name), () => handler.deRegisterPlugin(name, endpoint, context)),
    };
  };

  return {
    add(type, handler) {
      if (typeof type !== 'string' || type === '') {
        throw new BerthError('BERTH_INVALID_ARGUMENT', 'handler type must be a non-empty string');
      }
      if (!isPluginHandler(handler)) {
        throw new BerthError(
          'BERTH_INVALID_ARGUMENT',
          `handler for type ${type} must have validatePlugin, registerPlugin and deRegisterPlugin methods`,
        );
      }
      entries.set(type, { handler, wrapper: wrap(type, handler) });
      for (const listener of [...listeners]) {
        try {
          listener(type);
        } catch (err) {
          logger.warn({ type, err: errorMessage(err) }, 'handler-added listener threw');
        }
      }
    },
    remove: (type) => entries.delete(type),
    get: (type) => entries.get(type)?.wrapper,
    has: (type) => entries.has(type),
    types: () => [...entries.keys()].sort(),
    onAdded(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

function isPluginHandler(value: unknown): value is PluginHandler {
  if (typeof value !== 'object' || value === null) return false;
  const h = value as Record<string, unknown>;
  return (
    typeof h.validatePlugin === 'function' &&
    typeof h.registerPlugin === 'function' &&
    typeof h.deRegisterPlugin === 'function'
  );
}
