/**
 * Builds one handler per builtinHandlers entry, each from its own services
 * (its logger, its config section) and delegate. The result is keyed by type
 * and typed per entry, so the owner can reach e.g. the CSI handler's driver
 * list without a cast.
 */
import {
  BUILTIN_HANDLER_TYPES,
  type BuiltinHandlerOf,
  type BuiltinHandlerType,
  builtinHandlers,
} from './builtin-handlers.js';
import type { HandlerServices, PluginHandler } from './types.js';

export type BuiltinHandlerSet = { [T in BuiltinHandlerType]: BuiltinHandlerOf<T> };

export async function buildBuiltinHandlers(
  servicesFor: (type: BuiltinHandlerType) => HandlerServices,
  delegateFor?: (type: BuiltinHandlerType) => PluginHandler | undefined,
): Promise<BuiltinHandlerSet> {
  const built: Partial<Record<BuiltinHandlerType, unknown>> = {};
  for (const type of BUILTIN_HANDLER_TYPES) {
    const factory = await builtinHandlers[type].load();
    built[type] = factory(servicesFor(type), delegateFor?.(type));
  }
  return built as BuiltinHandlerSet;
}
