/**
 * A module loaded on its first use, then kept. berth's gRPC side (grpc-js,
 * protobuf-es and the generated CSI, DRA and device-plugin messages) is
 * loaded this way by the handlers, so a daemon start evaluates none of it:
 * about 16 ms of a 183 ms start (issue 20). Every caller awaits the same
 * load; a load that failed is forgotten, so the next caller tries again
 * rather than inheriting one failure forever.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
}
