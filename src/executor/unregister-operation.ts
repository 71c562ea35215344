import type { ActualStateOfWorld, PluginInfo } from '../cache/types.js';
import { BerthError, errorMessage, type Logger } from '../common/index.js';
import type { PluginCallContext, PluginHandler } from '../handlers/types.js';

/**
 * One deregistration (kubelet operation_generator.go): no gRPC call, the
 * actual state is updated FIRST and then the handler is told which instance
 * (name and endpoint) is going. Without a handler the entry stays and the
 * operation fails, to be retried with backoff.
 */
export async function unregisterOperation(
  info: PluginInfo,
  asw: ActualStateOfWorld,
  logger: Logger,
): Promise<void> {
  const handler = info.handler;
  if (handler === undefined) {
    throw new BerthError(
      'BERTH_HANDLER_MISSING',
      `UnregisterPlugin error -- failed to get plugin handler for ${info.socketPath}`,
      { details: { socketPath: info.socketPath } },
    );
  }
  // Only this generation's entry: a newer one at the same path is not ours to remove.
  if (asw.pluginExistsWithCorrectUUID(info)) asw.removePlugin(info.socketPath);
  await deregisterQuietly(handler, info, contextOf(info), logger);
}

export function contextOf(info: PluginInfo): PluginCallContext {
  return {
    type: info.type ?? '',
    socketPath: info.socketPath,
    foundInDeprecatedDir: info.foundInDeprecatedDir,
  };
}

/**
 * Calls the handler's deRegisterPlugin; a failure is logged, not thrown: the
 * plugin is already out of the actual state and nothing would retry it.
 */
export async function deregisterQuietly(
  handler: PluginHandler,
  info: PluginInfo,
  context: PluginCallContext,
  logger: Logger,
): Promise<void> {
  const name = info.name ?? '';
  const endpoint = info.endpoint ?? info.socketPath;
  try {
    await handler.deRegisterPlugin(name, endpoint, context);
  } catch (err) {
    logger.warn(
      { socketPath: info.socketPath, plugin: name, err },
      `DeRegisterPlugin for ${name} at socket ${info.socketPath} failed: ${errorMessage(err)}`,
    );
  }
}
