/**
 * The package entry point berth/handlers/device-plugin: what a library user needs. package.json
 * "exports" maps the subpath to this file, not to index.ts, which also carries
 * names only berth's own folders use (lint lets other folders in through
 * index.ts; the package does not export it, so users cannot reach them).
 * scripts/api-report.mjs keeps the names and their signatures in api/.
 */
export {
  type AllocationRequest,
  type AllocationResult,
  type AllocationView,
  createDeviceManagerDelegate,
  createDevicePluginManager,
  type DevicePluginManager,
  type DevicePluginManagerOptions,
  type DeviceView,
  type ResourceView,
} from './index.js';
