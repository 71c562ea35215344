/**
 * Everything the DRA handler does over gRPC, in one module it loads when the
 * first driver registers (dra-handler.ts): the watched connection, the
 * per-version calls and messages, the unary call. A daemon with no DRA
 * driver loads neither grpc-js nor the generated messages (issue 20).
 */
export { callUnary } from '../../registration/index.js';
export { DraConnection } from './dra-connection.js';
export { draApis } from './dra-wire.js';
