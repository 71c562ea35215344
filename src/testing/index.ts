/**
 * berth/testing: what a library user needs to test against berth. A fake
 * clock and condition waits with deadlines, temp dirs with short socket paths,
 * stale sockets, a recording handler and the example handler and plugin to
 * register, and fixtures for the object manager and the registry. Nothing
 * here is used by berth itself; no other entry point exports any of it.
 *
 * berth's own test harness (a real etcd server and cluster, the cluster fleet,
 * the plugin farm, test drivers, tmpfs and child-process helpers) lives in
 * ./harness/: berth's tests and benchmarks import harness/index.ts, the
 * package neither exports nor ships it (package.json "files").
 */

export { type CountingSource, countingSource, type GatedSource, gatedSource } from './counting-source.js';
export { createExampleHandler, ExampleHandler, type ExampleHandlerOptions } from './example-handler.js';
export { FakeClock, settle } from './fake-clock.js';
export {
  configMap,
  type EnvSecrets,
  podWithSecrets,
  type SecretsToAttach,
  secret,
} from './object-fixtures.js';
export { type RecordedCall, RecordingHandler, type RecordingHandlerBehaviour } from './recording-handler.js';
export { nodePlugin } from './registry-fixtures.js';
export { createStaleSocket } from './stale-socket.js';
export { createTempDir, type TempDir } from './temp-dir.js';
export { newTestExamplePlugin } from './test-example-plugin.js';
export { nextWithin, type WaitForOptions, waitFor } from './wait-for.js';
