/**
 * The unix-socket gRPC transport: every gRPC server berth runs on a unix
 * socket listens through `listenUnixGrpc`, which accepts the `:authority`
 * values real clients send (see h2-request-rewriter.ts).
 */

export { listenUnixGrpc, type UnixGrpcListener } from './unix-grpc-server.js';
export { shutdownUnixGrpc } from './unix-grpc-shutdown.js';
