export type { ConnectionState } from './dra-connection.js';
export {
  type ClaimResult,
  type ClaimsResult,
  createDraHandler,
  DRAPlugin,
  type DraDevice,
  type DraDriverView,
  DraHandler,
  type DraInstanceView,
} from './dra-handler.js';
export { DRA_DEFAULTS, type DraHandlerOptions } from './dra-options.js';
export { chooseDraService, type DraService, draServicesSupported } from './dra-services.js';
export {
  type ClaimRef,
  type DraApi,
  draApis,
  type PrepareResponse,
  type UnprepareResponse,
} from './dra-wire.js';
