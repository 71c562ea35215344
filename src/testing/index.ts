/**
 * Test support for berth and for users testing against berth: a fake clock,
 * condition waits with deadlines, temp dirs with short socket paths, real
 * child processes, stale sockets, a real etcd server, recorders, and fixtures
 * for the plugin manager, the registry and the object manager. Nothing here
 * is used by berth itself; no other index.ts exports any of it.
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
export { connectedServer } from './connected-server.js';
export { type CountingSource, countingSource, type GatedSource, gatedSource } from './counting-source.js';
export { type CsiTestDriver, type CsiTestDriverBehaviour, startCsiTestDriver } from './csi-test-driver.js';
export {
  type DevicePluginStub,
  type DevicePluginStubOptions,
  type StubDevice,
  startDevicePluginStub,
} from './device-plugin-stub.js';
export { type DraTestDriver, type DraTestDriverBehaviour, startDraTestDriver } from './dra-test-driver.js';
export {
  type EtcdCluster,
  type EtcdClusterOptions,
  type EtcdMember,
  startEtcdCluster,
} from './etcd-cluster.js';
export { type EtcdServer, type EtcdServerOptions, startEtcdServer } from './etcd-server.js';
export { createExampleHandler, ExampleHandler, type ExampleHandlerOptions } from './example-handler.js';
export { FakeClock, settle } from './fake-clock.js';
export { type GrpcTestServer, grpcServiceError, startGrpcTestServer } from './grpc-test-server.js';
export { type RecordingServices, recordingServices } from './handler-services.js';
export { topLevelJsonKeys } from './json-keys.js';
export {
  type NotifyReceiver,
  notifyReceiverAvailable,
  startNotifyReceiver,
} from './notify-receiver.js';
export {
  configMap,
  countedSecrets,
  type EnvSecrets,
  podWithSecrets,
  type SecretsToAttach,
  secret,
} from './object-fixtures.js';
export { type PausableProxy, startPausableProxy } from './pausable-proxy.js';
export { type FarmSocketStats, type PluginFarm, startPluginFarm } from './plugin-farm.js';
export { type RecordedCall, RecordingHandler, type RecordingHandlerBehaviour } from './recording-handler.js';
export { createRecordingLogger, type LogRecord } from './recording-logger.js';
export { type InstrumentedStorage, instrumented, nodePlugin } from './registry-fixtures.js';
export { mkfifo, type ServedSocket, SocketPool, serveSocket } from './served-socket.js';
export {
  type ModuleRun,
  runModule,
  siblingModule,
  spawnModule,
  stopChild,
  type TrackedChild,
  trackChild,
  waitForLine,
} from './spawn-module.js';
export { createStaleSocket } from './stale-socket.js';
export { type StorageFixture, type StorageKind, storageKinds } from './storage-kinds.js';
export { createTempDir, type TempDir } from './temp-dir.js';
export { createTestCertificates, type TestCertificates } from './test-certificates.js';
export { newTestExamplePlugin } from './test-example-plugin.js';
export { canMountTmpfs, fillDisk, mountTmpfs, unmountTmpfs } from './tmpfs.js';
export { getOverUnixSocket, metricValue, type UnixHttpAnswer } from './unix-http.js';
export { nextWithin, type WaitForOptions, waitFor } from './wait-for.js';
