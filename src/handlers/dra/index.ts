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
// What a test or example driver needs to answer berth on the wire is dra-wire.ts.
export type { ClaimRef, PrepareResponse, UnprepareResponse } from './dra-wire.js';
