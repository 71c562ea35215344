import type { Clock, Logger, PluginEvent } from '../common/index.js';
import {
  type BuiltinHandlerSet,
  buildBuiltinHandlers,
  createVersionedHandler,
  type InstanceRef,
  type PluginHandler,
} from '../handlers/index.js';
import type { DaemonConfig, HandlerConfig } from './config/config.js';

export interface HandlerSetupDeps {
  config: Pick<DaemonConfig, 'dataDir' | 'handlerOptions' | 'handlers' | 'mode'>;
  logger: Logger;
  clock: Clock;
  emit(event: PluginEvent): void;
  recordFacts(instance: InstanceRef, facts: Readonly<Record<string, string>>): void;
  delegateFor(type: string): PluginHandler;
}

export interface DaemonHandlers {
  /** Every handler by plugin type, for the plugin manager. */
  all: Map<string, PluginHandler>;
  /** The built-in ones, typed per entry of the builtinHandlers table (the API reads CSI and DRA state). */
  builtin: BuiltinHandlerSet;
  /** The accepted versions of each versioned (config) handler; a reload replaces a list here. */
  versions: Map<string, readonly string[]>;
}

/**
 * The handler for every plugin type the daemon accepts: one per entry of the
 * builtinHandlers table (built from the daemon's services and the handler's
 * `handlerOptions` section), plus a versioned handler for each configured
 * type (the example type is always among them). Each handler delegates to
 * the registry bridge so the plugin lands in the registry.
 */
export async function buildHandlers(deps: HandlerSetupDeps): Promise<DaemonHandlers> {
  const { config } = deps;
  const builtin = await buildBuiltinHandlers(
    (type) => ({
      logger: deps.logger.child({ component: `handler-${type}` }),
      clock: deps.clock,
      dataDir: config.dataDir,
      emit: deps.emit,
      recordFacts: deps.recordFacts,
      options: config.handlerOptions[type] ?? {},
      mode: config.mode,
    }),
    (type) => deps.delegateFor(type),
  );
  const all = new Map<string, PluginHandler>(Object.entries(builtin));
  const versions = new Map<string, readonly string[]>();
  for (const handler of config.handlers as HandlerConfig[]) {
    const { type } = handler;
    versions.set(type, [...handler.versions]);
    all.set(
      type,
      createVersionedHandler({
        type,
        versions: () => versions.get(type) ?? [],
        delegate: deps.delegateFor(type),
      }),
    );
  }
  return { all, builtin, versions };
}
