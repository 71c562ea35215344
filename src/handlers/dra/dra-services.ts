/**
 * Which DRA gRPC service a driver is called through (kubelet 1.34
 * dra_plugin_manager.go): the registration's "versions" are service names;
 * the first one in the plugin's own order that berth speaks wins.
 */
import { goQuotedList } from '../go-format.js';

/** DRA gRPC services berth can call, most preferred first (kubelet 1.34's servicesSupportedByKubelet). */
export const draServicesSupported = ['v1.DRAPlugin', 'v1beta1.DRAPlugin'] as const;
export type DraService = (typeof draServicesSupported)[number];

export type ServiceChoice = { ok: true; service: DraService } | { ok: false; error: string };

export function chooseDraService(name: string, endpoint: string, versions: readonly string[]): ServiceChoice {
  const prefix = `invalid supported gRPC versions of DRA driver plugin ${name} at endpoint ${endpoint}:`;
  if (versions.length === 0) {
    return { ok: false, error: `${prefix} empty list of supported gRPC services (aka supported versions)` };
  }
  for (const version of versions) {
    if ((draServicesSupported as readonly string[]).includes(version)) {
      return { ok: true, service: version as DraService };
    }
  }
  return {
    ok: false,
    error: `${prefix} none of services supported by the plugin (${goQuotedList(versions)}) are supported by the kubelet (${goQuotedList(draServicesSupported)})`,
  };
}
