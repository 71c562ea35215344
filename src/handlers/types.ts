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
}

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
