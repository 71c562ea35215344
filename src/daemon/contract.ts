/**
 * The daemon's external contract in a light entry point: default paths, the
 * example plugin's type, address parsing, the version, and the shapes of API
 * answers. The CLI's client commands import this instead of index.ts, which
 * loads the whole daemon (gRPC, fastify, SQLite) and cost every `berth
 * plugins` about 0.4 s of start-up.
 */
/** Every HTTP answer's shape; a type added to wire-types.ts is exported here and from berth/daemon/contract. */

export { UNIX_SOCKET_PATH_MAX_BYTES } from '../unix-grpc/unix-grpc-options.js';
export type * from './api/wire-types.js';
export { isRecordedAddress, readApiAddresses } from './api-address-file.js';
export {
  BUILTIN_HANDLER_TYPES,
  DEFAULTS,
  type DefaultPaths,
  dataDirLayout,
  defaultApiSocket,
  defaultDataDir,
  defaultPaths,
  EXAMPLE_PLUGIN_TYPE,
  EXAMPLE_PLUGIN_VERSIONS,
  LOG_FORMATS,
  LOG_LEVELS,
  type PathScope,
  SYSTEM_PATHS,
} from './config/defaults.js';
export { formatHostPort, parseHostPort, type TcpAddress } from './config/listen-address.js';
export { berthVersion } from './version.js';
