import type { z } from 'zod';
import type { BerthMode, Clock, Logger, PluginEvent } from '../common/index.js';

/**
 * The PluginHandler contract (kubelet `cache.PluginHandler`), in TypeScript form.
 * A handler owns one plugin type. berth calls, per plugin name and strictly in
 * sequence: validatePlugin -> registerPlugin -> deRegisterPlugin. A throw (or
 * rejected promise) from validate or register fails that registration attempt.
 */
export interface PluginCallContext {
  /** The plugin type reported in GetInfo. */
  type: string;
  /** The registration socket the plugin was discovered on (the instance's identity). */
  socketPath: string;
  /** True when the socket was found in the optional deprecated directory. */
  foundInDeprecatedDir: boolean;
  /**
   * `observe` when another registrar owns the directory: validate is a dry run
   * (its verdict is reported, never sent) and register must make read-only
   * calls only. Absent: registrar mode.
   */
  mode?: BerthMode;
  /**
   * How the plugin came in: its registration socket in the plugins directory
   * (the default), or the device plugin API's legacy `kubelet.sock`, where
   * `socketPath` is the plugin's own endpoint.
   */
  source?: PluginSource;
}

export type PluginSource = 'plugins-dir' | 'kubelet.sock';

export interface RegisterContext extends PluginCallContext {
  /** Optional timeout for the handler's own client calls (kubelet's pluginClientTimeout). */
  pluginClientTimeoutMs?: number;
}

export interface PluginHandler {
  validatePlugin(
    name: string,
    endpoint: string,
    versions: string[],
    context: PluginCallContext,
  ): void | Promise<void>;
  registerPlugin(
    name: string,
    endpoint: string,
    versions: string[],
    context: RegisterContext,
  ): void | Promise<void>;
  /** `endpoint` says which instance is going (several sockets may carry one name). */
  deRegisterPlugin(name: string, endpoint: string, context: PluginCallContext): void | Promise<void>;
}

/** Which registry instance a fact is about: the plugin and the registration socket it came through. */
export interface InstanceRef {
  type: string;
  name: string;
  /** The registration socket (the registry instance's allocId). */
  socketPath: string;
}

/**
 * What a built-in handler gets from whoever runs it (the daemon, or a library
 * user): everything it may touch outside its own folder. Each is small on
 * purpose so a test can pass a stand-in (a FakeClock, a recording sink).
 */
export interface HandlerServices {
  /** Already named for the handler (`component: csi`, ...). */
  readonly logger: Logger;
  /** All timers of the handler run on this clock (tests inject a FakeClock). */
  readonly clock: Clock;
  /** berth's data directory; a handler keeps any files of its own in a subfolder it names. */
  readonly dataDir: string;
  /** Publishes onto berth's event union (the API's /v1/events, logs and metrics are views of it). */
  emit(event: PluginEvent): void;
  /**
   * Records facts about one instance as string entries of its registry
   * instance's `options` (persisted with it, visible on /v1/plugins). Keys are
   * prefixed with the handler's short name (`csi.nodeId`). Facts recorded
   * while the instance's registration is under way land with it; later ones
   * update the instance (an `updated` event). They go when the instance goes.
   */
  recordFacts(instance: InstanceRef, facts: Readonly<Record<string, string>>): void;
  /** This handler's section of the config file (`handlerOptions.<type>`); the handler validates it. */
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * `observe`: another registrar (a kubelet) owns the plugins: the handler
   * makes read-only calls only (no allocation, no claim preparation, no
   * legacy kubelet.sock) and flags what it shows as observed. Default registrar.
   */
  readonly mode?: BerthMode;
}

/**
 * A handler for one of the kubelet's plugin types, built from services. Its
 * owner calls `start` before plugins are registered and `stop` at shutdown
 * (closing connections and timers; stop is idempotent).
 */
export interface BuiltinHandler extends PluginHandler {
  readonly type: string;
  start?(signal?: AbortSignal): Promise<void>;
  stop?(): Promise<void>;
}

/** How a built-in handler is made; `delegate` receives validate (after the handler's own checks), register and deregister. */
export type BuiltinHandlerFactory<H extends BuiltinHandler = BuiltinHandler> = (
  services: HandlerServices,
  delegate?: PluginHandler,
) => H;

/**
 * Where the DevicePlugin handler serves the legacy registration socket by
 * default (a directory under the data dir) and its file name. Here, so the
 * daemon's config can keep the plugins directory clear of it without loading
 * handler code.
 */
export const DEVICE_PLUGIN_LEGACY_SOCKET = { defaultSubdir: 'device-plugins', name: 'kubelet.sock' } as const;

/**
 * The zod pieces the daemon's config schema lends a handler type, so a
 * handler's `*-options.ts` describes its config section without loading zod
 * (those files stay light: the CLI loads them through the config defaults).
 */
export interface OptionsSchemaKit {
  z: typeof z;
  /** A duration ("500ms", "10s", "2m" or milliseconds), parsed to milliseconds. */
  duration: z.ZodType<number, unknown>;
  /** A non-empty string. */
  text: z.ZodType<string, unknown>;
  positiveInt: z.ZodType<number, unknown>;
}

/** What a built-in handler type owns of the config file: its `handlerOptions.<type>` section. */
export interface HandlerConfigOptions {
  /** The section's schema: keys as a user writes them, unknown keys refused. */
  schema(kit: OptionsSchemaKit): z.ZodType<Record<string, unknown> | undefined, unknown>;
  /**
   * The parsed section as the handler's options (`HandlerServices.options`);
   * `fromFile` resolves a path relative to the config file. Keys left out are
   * left to the handler's defaults.
   */
  resolve(
    section: Readonly<Record<string, unknown>>,
    fromFile: (path: string) => string,
  ): Record<string, unknown>;
}
