/**
 * berth's own test harness: real servers and processes its tests and
 * benchmarks start (etcd, the cluster fleet, the plugin farm, CSI/DRA/device
 * plugin test drivers, tmpfs, child processes), and recorders. Not part of the
 * package: berth/testing (../index.ts) does not export it, package.json
 * "files" leaves it out, and lint keeps the public helpers from importing it.
 */

export { countedSecrets } from '../object-fixtures.js';
export { type InstrumentedStorage, instrumented } from '../registry-fixtures.js';
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
export {
  ECHO_METHOD,
  type GrpcTestServer,
  grpcServiceError,
  startGrpcTestServer,
} from './grpc-test-server.js';
export { type RecordingServices, recordingServices } from './handler-services.js';
export { topLevelJsonKeys } from './json-keys.js';
export {
  type NotifyReceiver,
  notifyReceiverAvailable,
  startNotifyReceiver,
} from './notify-receiver.js';
export { type PausableProxy, startPausableProxy } from './pausable-proxy.js';
export { type FarmSocketStats, type PluginFarm, startPluginFarm } from './plugin-farm.js';
export { createRecordingLogger, type LogRecord } from './recording-logger.js';
export { mkfifo, type ServedSocket, SocketPool, serveSocket } from './served-socket.js';
export {
  BERTH_CLI,
  type ModuleRun,
  runModule,
  siblingModule,
  spawnModule,
  stopChild,
  type TrackedChild,
  trackChild,
  waitForLine,
} from './spawn-module.js';
export { type StorageFixture, type StorageKind, storageKinds } from './storage-kinds.js';
export { createTestCertificates, type TestCertificates } from './test-certificates.js';
export { canMountTmpfs, fillDisk, mountTmpfs, unmountTmpfs } from './tmpfs.js';
export { getOverUnixSocket, metricValue, type UnixHttpAnswer } from './unix-http.js';
