import { BerthError, type PluginInstanceInfo } from '../common/index.js';

function invalid(message: string): BerthError {
  return new BerthError('BERTH_PLUGIN_INVALID', message);
}

/**
 * Checks a registration in Nomad's order and with its messages, then returns
 * a normalised copy (missing version/allocId/options become empty values).
 * Input arrives from handlers and the API, so shapes are checked at runtime too.
 */
export function normalizeRegistration(info: PluginInstanceInfo): PluginInstanceInfo {
  if (typeof info !== 'object' || info === null) throw invalid('Plugin must be an object');
  if (typeof info.type !== 'string' || info.type === '') throw invalid('Plugin.Type must not be empty');
  const connection: unknown = info.connectionInfo;
  if (connection === undefined || connection === null) throw invalid('Plugin.ConnectionInfo must not be nil');
  if (typeof info.name !== 'string' || info.name === '') throw invalid('Plugin.Name must not be empty');
  const socketPath = (connection as { socketPath?: unknown }).socketPath ?? '';
  if (typeof socketPath !== 'string') throw invalid('Plugin.ConnectionInfo.SocketPath must be a string');
  const allocId: unknown = info.allocId ?? '';
  if (typeof allocId !== 'string') throw invalid('Plugin.AllocID must be a string');
  const version: unknown = info.version ?? '';
  if (typeof version !== 'string') throw invalid('Plugin.Version must be a string');
  const options: unknown = info.options ?? {};
  if (
    typeof options !== 'object' ||
    options === null ||
    Array.isArray(options) ||
    !Object.values(options).every((v) => typeof v === 'string')
  ) {
    throw invalid('Plugin.Options must map strings to strings');
  }
  return {
    type: info.type,
    name: info.name,
    version,
    connectionInfo: { socketPath },
    allocId,
    options: { ...(options as Record<string, string>) },
  };
}

/** The "must specify plugin <what> to <verb>" checks of deregister and dispense. */
export function requireArgument(value: unknown, what: string, verb: string): void {
  if (typeof value !== 'string' || value === '') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `must specify plugin ${what} to ${verb}`);
  }
}
