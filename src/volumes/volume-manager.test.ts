/**
 * The volume manager against a grpc-js CSI driver on a real unix socket,
 * without root: the driver "mounts" by adding the target to a mountinfo file
 * the manager is pointed at (mount(2) needs root; the real mounts are in
 * test/csi-volumes-*.test.ts). Covers what is hard to provoke with the Python
 * driver: concurrent publishes of one volume, usage counts rebuilt after a
 * restart (nomad#25813), and a NodePublish that times out.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import type { ServiceDefinition, sendUnaryData } from '@grpc/grpc-js';
import { BerthError, silentLogger } from '../common/index.js';
import {
  csiControllerMethods,
  csiNodeService,
  csiNodeVolumeMethods,
  NodeGetCapabilitiesResponseSchema,
  NodeServiceCapability_RPC_Type,
} from '../handlers/csi/csi-wire.js';
import { startGrpcTestServer } from '../testing/harness/index.js';
import { createTempDir, FakeClock, type TempDir } from '../testing/index.js';
import { VolumeManager } from './volume-manager.js';

interface FakeDriver {
  calls: string[];
  /** Most calls on the volume in flight at once. */
  maxConcurrent: number;
  /** NodePublishVolume never answers while set. */
  holdPublish: boolean;
  stop(): Promise<void>;
}

async function startFakeDriver(dir: TempDir, mountinfo: string): Promise<FakeDriver> {
  const driver: FakeDriver = { calls: [], maxConcurrent: 0, holdPublish: false, stop: async () => {} };
  let inFlight = 0;
  const mounted = new Set<string>();
  const writeMounts = () =>
    writeFileSync(mountinfo, [...mounted].map((p, i) => `${i + 50} 1 0:1 / ${p} rw - tmpfs t rw\n`).join(''));
  const call =
    (name: string, run: ((request: Record<string, unknown>) => void) | undefined, answer: unknown) =>
    async (c: { request: Record<string, unknown> }, done: sendUnaryData<unknown>) => {
      driver.calls.push(name);
      inFlight += 1;
      driver.maxConcurrent = Math.max(driver.maxConcurrent, inFlight);
      // A little time inside the call, so overlapping calls would be seen.
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight -= 1;
      if (name === 'NodePublishVolume' && driver.holdPublish) return; // never answers
      run?.(c.request);
      done(null, answer);
    };
  const capability = (type: NodeServiceCapability_RPC_Type) => ({
    type: { case: 'rpc' as const, value: { type } },
  });
  const server = await startGrpcTestServer(dir.join('driver.sock'), [
    [
      csiNodeService,
      {
        nodeGetCapabilities: call(
          'NodeGetCapabilities',
          undefined,
          create(NodeGetCapabilitiesResponseSchema, {
            capabilities: [
              capability(NodeServiceCapability_RPC_Type.STAGE_UNSTAGE_VOLUME),
              capability(NodeServiceCapability_RPC_Type.GET_VOLUME_STATS),
            ],
          }),
        ),
        nodeGetInfo: call('NodeGetInfo', undefined, empty(csiNodeService.nodeGetInfo)),
      },
    ],
    [
      csiNodeVolumeMethods as ServiceDefinition,
      {
        nodeStageVolume: call(
          'NodeStageVolume',
          (r) => {
            mounted.add(String(r.stagingTargetPath));
            writeMounts();
          },
          empty(csiNodeVolumeMethods.nodeStageVolume),
        ),
        nodeUnstageVolume: call(
          'NodeUnstageVolume',
          (r) => {
            mounted.delete(String(r.stagingTargetPath));
            writeMounts();
          },
          empty(csiNodeVolumeMethods.nodeUnstageVolume),
        ),
        nodePublishVolume: call(
          'NodePublishVolume',
          (r) => {
            mounted.add(String(r.targetPath));
            writeMounts();
          },
          empty(csiNodeVolumeMethods.nodePublishVolume),
        ),
        nodeUnpublishVolume: call(
          'NodeUnpublishVolume',
          (r) => {
            mounted.delete(String(r.targetPath));
            writeMounts();
          },
          empty(csiNodeVolumeMethods.nodeUnpublishVolume),
        ),
        nodeGetVolumeStats: call(
          'NodeGetVolumeStats',
          undefined,
          empty(csiNodeVolumeMethods.nodeGetVolumeStats),
        ),
      },
    ],
    [
      csiControllerMethods as ServiceDefinition,
      {
        controllerGetCapabilities: call(
          'ControllerGetCapabilities',
          undefined,
          empty(csiControllerMethods.controllerGetCapabilities),
        ),
      },
    ],
  ]);
  driver.stop = server.stop;
  writeMounts();
  return driver;
}

function manager(dir: TempDir, mountinfo: string, callTimeoutMs = 5_000): VolumeManager {
  return new VolumeManager({
    statePath: dir.join('csi-volumes.db'),
    mountRoot: dir.join('csi'),
    drivers: {
      lookup: (name) =>
        name === 'fake.csi' ? { endpoint: dir.join('driver.sock'), nodeId: 'n1' } : undefined,
    },
    callTimeoutMs,
    operationTimeoutMs: 10_000,
    clock: new FakeClock(),
    logger: silentLogger,
    mountInfoPath: mountinfo,
  });
}

/** An empty answer of the method's own response type (protobuf messages must be typed to serialise). */
const empty = (method: { responseDeserialize(bytes: Buffer): unknown }) =>
  method.responseDeserialize(Buffer.alloc(0));

const count = (driver: FakeDriver, name: string) => driver.calls.filter((c) => c === name).length;

describe('VolumeManager with a grpc-js driver', () => {
  it('serialises concurrent publishes of one volume: one stage, calls never overlap', async (t) => {
    const dir = createTempDir();
    const mountinfo = dir.join('mountinfo');
    const driver = await startFakeDriver(dir, mountinfo);
    const volumes = manager(dir, mountinfo);
    t.after(async () => {
      await volumes.stop();
      await driver.stop();
      dir.remove();
    });
    await volumes.start();
    const results = await Promise.all(
      ['w1', 'w2', 'w3', 'w1'].map((workload) => volumes.publish('fake.csi', 'v1', { workload })),
    );
    assert.equal(count(driver, 'NodeStageVolume'), 1);
    assert.equal(count(driver, 'NodePublishVolume'), 3);
    assert.equal(driver.maxConcurrent, 1);
    assert.deepEqual(results[3], results[0]);
  });

  it('rebuilds the usage counts after a restart: only the last unpublish unstages', async (t) => {
    const dir = createTempDir();
    const mountinfo = dir.join('mountinfo');
    const driver = await startFakeDriver(dir, mountinfo);
    t.after(async () => {
      await driver.stop();
      dir.remove();
    });
    const first = manager(dir, mountinfo);
    await first.start();
    await first.publish('fake.csi', 'v1', { workload: 'w1' });
    await first.publish('fake.csi', 'v1', { workload: 'w2' });
    await first.stop();

    const second = manager(dir, mountinfo);
    await second.start();
    t.after(() => second.stop());
    const [listed] = await second.list();
    assert.deepEqual(
      listed?.publications.map((p) => [p.workload, p.status]),
      [
        ['w1', 'published'],
        ['w2', 'published'],
      ],
    );
    await second.unpublish('fake.csi', 'v1', 'w1');
    assert.equal(count(driver, 'NodeUnstageVolume'), 0);
    await second.unpublish('fake.csi', 'v1', 'w2');
    assert.equal(count(driver, 'NodeUnstageVolume'), 1);
    assert.equal(readFileSync(mountinfo, 'utf8'), '');
    assert.deepEqual(await second.list(), []);
  });

  it('a NodePublish that times out answers 503 with Retry-After, sends the negation and keeps nothing', async (t) => {
    const dir = createTempDir();
    const mountinfo = dir.join('mountinfo');
    const driver = await startFakeDriver(dir, mountinfo);
    const volumes = manager(dir, mountinfo, 300);
    t.after(async () => {
      await volumes.stop();
      await driver.stop();
      dir.remove();
    });
    await volumes.start();
    driver.holdPublish = true;
    await assert.rejects(volumes.publish('fake.csi', 'v1', { workload: 'w1' }), (err: unknown) => {
      assert.ok(err instanceof BerthError);
      assert.equal(err.code, 'BERTH_CSI_DRIVER_UNAVAILABLE');
      assert.equal(err.details.retryAfterSeconds, 5);
      assert.match(
        err.message,
        /NodePublishVolume on driver fake\.csi failed: rpc error: code = DeadlineExceeded/,
      );
      return true;
    });
    assert.equal(count(driver, 'NodeUnpublishVolume'), 1);
    assert.equal(count(driver, 'NodeUnstageVolume'), 1);
    assert.deepEqual(await volumes.list(), []);
    driver.holdPublish = false;
    const published = await volumes.publish('fake.csi', 'v1', { workload: 'w1' });
    assert.match(published.targetPath, /per-workload\/w1\/v1$/);
  });
});
