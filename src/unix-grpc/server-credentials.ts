/**
 * grpc-js's insecure server credentials, in a module of their own so that
 * unix-grpc-server.ts can load grpc-js with its first lazily built server.
 * A module, not `import('@grpc/grpc-js')` there: an ES module bundle
 * (esbuild, the CLI's) gives a dynamically imported CommonJS package only a
 * default export, while a static import like this one keeps its names.
 */
import { ServerCredentials } from '@grpc/grpc-js';

export function insecureServerCredentials(): ServerCredentials {
  return ServerCredentials.createInsecure();
}
