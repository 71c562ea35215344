import type { BerthMode, Clock, Logger, PluginEvent } from '../common/index.js';
import {
  BUILTIN_HANDLER_TYPES,
  type BuiltinHandlerSet,
  buildBuiltinHandlers,
  createVersionedHandler,
  type InstanceRef,
  type PluginHandler,
} from '../handlers/index.js';
import type { BuiltinHandlersOption } from './plugin-node-options.js';

export interface NodeHandlerDeps {
  builtin: BuiltinHandlersOption | undefined;
  versions: Readonly<Record<string, readonly string[]>>;
  mode: BerthMode;
  logger: Logger;
  clock: Clock;
  emit(event: PluginEvent): void;
  recordFacts(instance: InstanceRef, facts: Readonly<Record<string, string>>): void;
  delegateFor(type: string): PluginHandler;
}

/** The handlers a node built from its options (the `handlers` factories are added directly). */
export interface NodeHandlers {
  /** Every built handler by plugin type. */
  all: Map<string, PluginHandler>;
  /** The built-in ones, typed per entry of the builtinHandlers table; undefined when not asked for. */
  builtin: BuiltinHandlerSet | undefined;
  /** The accepted versions of each versioned handler; a reload replaces a list here. */
  versions: Map<string, readonly string[]>;
}

/** The plugin types a node's options give a handler (for the dispensers, before anything is built). */
export function configuredTypes(
  builtin: BuiltinHandlersOption | undefined,
  versions: Readonly<Record<string, readonly string[]>>,
  factories: Readonly<Record<string, unknown>>,
): string[] {
  return [
    ...(builtin === undefined ? [] : BUILTIN_HANDLER_TYPES),
    ...Object.keys(versions),
    ...Object.keys(factories),
  ];
}

/**
 * The handler for every plugin type the options name: one per entry of the
 * builtinHandlers table (each loaded lazily and built from its services: the
 * data directory, its `options` section, the mode), plus a versioned handler
 * per `handlerVersions` type. Each delegates to the registry bridge so the
 * plugin lands in the registry.
 */
export async function buildNodeHandlers(deps: NodeHandlerDeps): Promise<NodeHandlers> {
  const { builtin: wanted } = deps;
  const builtin =
    wanted === undefined
      ? undefined
      : await buildBuiltinHandlers(
          (type) => ({
            logger: deps.logger.child({ component: `handler-${type}` }),
            clock: deps.clock,
            dataDir: wanted.dataDir,
            emit: deps.emit,
            recordFacts: deps.recordFacts,
            options: wanted.options?.[type] ?? {},
            mode: deps.mode,
          }),
          (type) => deps.delegateFor(type),
        );
  const all = new Map<string, PluginHandler>(Object.entries(builtin ?? {}));
  const versions = new Map<string, readonly string[]>();
  for (const [type, list] of Object.entries(deps.versions)) {
    versions.set(type, [...list]);
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
