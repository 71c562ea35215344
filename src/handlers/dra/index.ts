export type { ClaimResult, ClaimsResult, DraDevice } from './dra-claims.js';
export type { ConnectionState } from './dra-connection.js';
export {
  createDraHandler,
  DRAPlugin,
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
