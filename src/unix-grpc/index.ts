/**
 * The unix-socket gRPC transport: every gRPC server berth runs on a unix
 * socket listens through `listenUnixGrpc`, which accepts the `:authority`
 * values real clients send (see h2-request-rewriter.ts).
 */

export { DEFAULT_AUTHORITY, MAX_HEADER_BLOCK_BYTES, type UnixGrpcOptions } from './unix-grpc-options.js';
export { type ListenUnixGrpcOptions, listenUnixGrpc, type UnixGrpcListener } from './unix-grpc-server.js';
