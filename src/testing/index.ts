/**
 * Test support for berth and for users testing against berth: a fake clock,
 * condition waits with deadlines, temp dirs with short socket paths, real
 * child processes, stale sockets, a real etcd server, and recorders.
 */

export { checkClusterInvariants, readPrefix, recordClusterEvents } from './cluster-checker.js';
export {
  type FleetMember,
  type FleetProcess,
  fleetPlugin,
  spawnFleetProcess,
  startFleetMember,
  startFleetReader,
} from './cluster-fleet.js';
export {
  type EtcdCluster,
  type EtcdClusterOptions,
  type EtcdMember,
  startEtcdCluster,
} from './etcd-cluster.js';
export { type EtcdServer, type EtcdServerOptions, startEtcdServer } from './etcd-server.js';
export { FakeClock, settle } from './fake-clock.js';
export { type PausableProxy, startPausableProxy } from './pausable-proxy.js';
export { type RecordedCall, RecordingHandler, type RecordingHandlerBehaviour } from './recording-handler.js';
export { createRecordingLogger, type LogRecord } from './recording-logger.js';
export { siblingModule, spawnModule, stopChild } from './spawn-module.js';
export { createStaleSocket } from './stale-socket.js';
export { createTempDir, type TempDir } from './temp-dir.js';
export { createTestCertificates, type TestCertificates } from './test-certificates.js';
export { nextWithin, type WaitForOptions, waitFor } from './wait-for.js';
