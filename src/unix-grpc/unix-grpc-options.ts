/** Bounds and defaults of the unix-socket gRPC transport (light: constants and types only). */

/**
 * The largest client header block (HEADERS plus its CONTINUATION frames,
 * counted with their 9-byte frame headers and padding) the transport
 * buffers. A bigger one closes the connection. grpc-js accepts at most 16 KiB
 * of metadata by default, so 64 KiB leaves room without letting one
 * client hold much memory.
 */
export const MAX_HEADER_BLOCK_BYTES = 64 * 1024;
/**
 * The largest dynamic table size a client may ask for. Node's server
 * advertises the protocol default (4096); nghttp2 refuses more than it
 * advertised anyway, this only bounds our copy of the table.
 */
export const MAX_DYNAMIC_TABLE_BYTES = 64 * 1024;
/** What a missing `:authority` becomes. */
export const DEFAULT_AUTHORITY = 'localhost';

export interface UnixGrpcOptions {
  /** Default MAX_HEADER_BLOCK_BYTES. */
  maxHeaderBlockBytes?: number;
}

/**
 * The longest unix socket path Linux binds or connects to (sun_path is 108
 * bytes with its terminating NUL). Every socket berth binds or dials is
 * checked against it first, for an error that names the path.
 */
export const UNIX_SOCKET_PATH_MAX_BYTES = 107;
