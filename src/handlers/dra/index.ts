export type { ClaimResult, ClaimsResult } from './dra-claims.js';
export {
  createDraHandler,
  DRAPlugin,
  type DraDriverView,
  DraHandler,
  type DraInstanceView,
} from './dra-handler.js';
export { DRA_DEFAULTS } from './dra-options.js';
export { type DraService, draServicesSupported } from './dra-services.js';
export { type ClaimRef, draApis, type PrepareResponse, type UnprepareResponse } from './dra-wire.js';
