/**
 * Handlers that only check what a plugin says in GetInfo (with the kubelet's
 * error text where there is one, so a plugin sees the same Notify reason under
 * berth), then hand register/deregister to an optional delegate (the daemon
 * passes its registry bridge): the device plugin check and the versioned
 * handler for configured types. CSI and DRA live in csi/ and dra/.
 */
import { BerthError } from '../common/index.js';
import { goList, goQuote } from './go-format.js';
import { isExtendedResourceName } from './resource-name.js';
import type {
  BuiltinHandler,
  HandlerServices,
  PluginCallContext,
  PluginHandler,
  RegisterContext,
} from './types.js';

export const DevicePlugin = 'DevicePlugin';

/** The device plugin API version the kubelet's device manager speaks. */
export const devicePluginApiVersion = 'v1beta1';

export interface BuiltinHandlerOptions {
  /** Receives validate (after this handler's own check), register and deregister. */
  delegate?: PluginHandler;
}

export interface DevicePluginHandlerOptions extends BuiltinHandlerOptions {
  /** Require the name to be an extended resource name like "vendor.com/gpu", as the kubelet does. Default true. */
  requireExtendedResourceName?: boolean;
}

export interface VersionedHandlerOptions extends BuiltinHandlerOptions {
  type: string;
  /**
   * A plugin is accepted when it lists at least one of these. A function is
   * read at each validation (the daemon's SIGHUP reload changes the list).
   */
  versions: string[] | (() => readonly string[]);
}

type Check = (name: string, endpoint: string, versions: string[]) => string | undefined;

function createCheckingHandler(
  type: string,
  check: Check,
  delegate: PluginHandler | undefined,
): BuiltinHandler {
  return {
    type,
    async validatePlugin(name: string, endpoint: string, versions: string[], context: PluginCallContext) {
      const problem = check(name, endpoint, versions);
      if (problem !== undefined) throw new BerthError('BERTH_VALIDATION_FAILED', problem);
      await delegate?.validatePlugin(name, endpoint, versions, context);
    },
    async registerPlugin(name: string, endpoint: string, versions: string[], context: RegisterContext) {
      await delegate?.registerPlugin(name, endpoint, versions, context);
    },
    async deRegisterPlugin(name: string, endpoint: string, context: PluginCallContext) {
      await delegate?.deRegisterPlugin(name, endpoint, context);
    },
  };
}

/** Device plugins: must list the device plugin API v1beta1 and (by default) carry an extended resource name. */
export function createDevicePluginHandler(options: DevicePluginHandlerOptions = {}): BuiltinHandler {
  const requireResourceName = options.requireExtendedResourceName ?? true;
  return createCheckingHandler(
    DevicePlugin,
    (name, _endpoint, versions) => {
      if (!versions.includes(devicePluginApiVersion)) {
        return `manager version, ${devicePluginApiVersion}, is not among plugin supported versions ${goList(versions)}`;
      }
      if (requireResourceName && !isExtendedResourceName(name)) {
        return `invalid name of device plugin socket: the ResourceName ${goQuote(name)} is invalid`;
      }
      return undefined;
    },
    options.delegate,
  );
}

/** The builtinHandlers table's factory for DevicePlugin (validation only, for now). */
export function devicePluginFactory(_services: HandlerServices, delegate?: PluginHandler): BuiltinHandler {
  return createDevicePluginHandler(delegate === undefined ? {} : { delegate });
}

/** Any other plugin type: accepted when it lists at least one of `versions`. */
export function createVersionedHandler(options: VersionedHandlerOptions): BuiltinHandler {
  const { type } = options;
  if (typeof type !== 'string' || type === '') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'versioned handler: type must be a non-empty string');
  }
  const given = options.versions;
  if (typeof given !== 'function' && (!Array.isArray(given) || given.length === 0)) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `versioned handler for ${type}: versions must list at least one accepted version`,
    );
  }
  const fixed = typeof given === 'function' ? [] : [...given];
  const read = typeof given === 'function' ? given : () => fixed;
  return createCheckingHandler(
    type,
    (name, _endpoint, versions) => {
      const accepted = read();
      if (versions.some((v) => accepted.includes(v))) return undefined;
      return `plugin ${name} of type ${type} supports versions ${goList(versions)}, none of which is accepted (accepted versions: ${goList(accepted)})`;
    },
    options.delegate,
  );
}
