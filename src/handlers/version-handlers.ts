/**
 * Built-in handlers for the plugin types the kubelet knows. Each accepts what
 * the kubelet accepts (with the kubelet's error text, so a plugin sees the
 * same Notify reason under berth), then hands register/deregister to an
 * optional delegate (the daemon passes its registry bridge).
 */
import { BerthError } from '../common/index.js';
import { highestSupportedVersion } from './generic-version.js';
import { goList, goQuote, goQuotedList } from './go-format.js';
import { isExtendedResourceName } from './resource-name.js';
import type { PluginCallContext, PluginHandler, RegisterContext } from './types.js';

export const CSIPlugin = 'CSIPlugin';
export const DevicePlugin = 'DevicePlugin';
export const DRAPlugin = 'DRAPlugin';
export const builtinHandlerTypes = { CSIPlugin, DevicePlugin, DRAPlugin } as const;

/** The device plugin API version the kubelet's device manager speaks. */
export const devicePluginApiVersion = 'v1beta1';
/** DRA gRPC services the kubelet can use, most preferred first. */
export const draServicesSupported: readonly string[] = ['v1.DRAPlugin', 'v1beta1.DRAPlugin'];

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
  /** A plugin is accepted when it lists at least one of these. */
  versions: string[];
}

/** A handler that knows the plugin type it serves. */
export interface BuiltinHandler extends PluginHandler {
  readonly type: string;
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

/** CSI drivers (node-driver-registrar): some listed version must be a CSI 1.x version. */
export function createCsiHandler(options: BuiltinHandlerOptions = {}): BuiltinHandler {
  return createCheckingHandler(
    CSIPlugin,
    (name, endpoint, versions) => {
      const prefix = `validation failed for CSI Driver ${name} at endpoint ${endpoint}: kubernetes.io/csi: ValidatePlugin for CSI driver ${goQuote(name)} failed.`;
      if (versions.length === 0) return `${prefix} Plugin returned an empty list for supported versions`;
      try {
        highestSupportedVersion(versions);
        return undefined;
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        return `${prefix} None of the versions specified ${goQuotedList(versions)} are supported. err=${reason}`;
      }
    },
    options.delegate,
  );
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

/** DRA drivers: "versions" are the gRPC services they serve; one must be a DRAPlugin service the kubelet uses. */
export function createDraHandler(options: BuiltinHandlerOptions = {}): BuiltinHandler {
  return createCheckingHandler(
    DRAPlugin,
    (name, endpoint, versions) => {
      const prefix = `invalid supported gRPC versions of DRA driver plugin ${name} at endpoint ${endpoint}:`;
      if (versions.length === 0)
        return `${prefix} empty list of supported gRPC services (aka supported versions)`;
      if (!versions.some((v) => draServicesSupported.includes(v))) {
        return `${prefix} none of services supported by the plugin (${goQuotedList(versions)}) are supported by the kubelet (${goQuotedList(draServicesSupported)})`;
      }
      return undefined;
    },
    options.delegate,
  );
}

/** Any other plugin type: accepted when it lists at least one of `versions`. */
export function createVersionedHandler(options: VersionedHandlerOptions): BuiltinHandler {
  const { type } = options;
  if (typeof type !== 'string' || type === '') {
    throw new BerthError('BERTH_INVALID_ARGUMENT', 'versioned handler: type must be a non-empty string');
  }
  if (!Array.isArray(options.versions) || options.versions.length === 0) {
    throw new BerthError(
      'BERTH_INVALID_ARGUMENT',
      `versioned handler for ${type}: versions must list at least one accepted version`,
    );
  }
  const accepted = [...options.versions];
  return createCheckingHandler(
    type,
    (name, _endpoint, versions) => {
      if (versions.some((v) => accepted.includes(v))) return undefined;
      return `plugin ${name} of type ${type} supports versions ${goList(versions)}, none of which is accepted (accepted versions: ${goList(accepted)})`;
    },
    options.delegate,
  );
}
