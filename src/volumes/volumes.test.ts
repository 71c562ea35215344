import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BerthError, silentLogger } from '../common/index.js';
import { createTempDir, FakeClock } from '../testing/index.js';
import { parseMountPoints, readMountTable } from './mount-table.js';
import { ephemeralVolumeId, inlineVolumesOf } from './pod-inline-volumes.js';
import { VolumeManager } from './volume-manager.js';
import { checkPathComponent, volumePaths } from './volume-paths.js';
import { VolumeQueue } from './volume-queue.js';
import { VolumeStore } from './volume-store.js';

describe('CSI volume path components', () => {
  it('accepts one safe component of at most 128 bytes', () => {
    assert.equal(checkPathComponent('workload', 'job-1.a_b'), 'job-1.a_b');
    assert.equal(checkPathComponent('workload', 'x'.repeat(128)), 'x'.repeat(128));
  });
  it('refuses what could escape the mount root, naming the field', () => {
    for (const [value, why] of [
      ['..', /escape/],
      ['.', /escape/],
      ['a/b', /contains "\/"/],
      ['/abs', /contains "\/"/],
      ['a\0b', /NUL/],
      ['é'.repeat(65), /130 bytes/],
      ['', /required/],
      [7, /required/],
    ] as const) {
      assert.throws(
        () => checkPathComponent('volumeId', value),
        (err: unknown) =>
          err instanceof BerthError &&
          err.code === 'BERTH_INVALID_ARGUMENT' &&
          why.test(err.message) &&
          err.message.startsWith('volumeId: '),
        String(value),
      );
    }
  });
  it('lays out one staging path per volume and one target per (workload, volume)', () => {
    const paths = volumePaths('/r');
    assert.equal(paths.staging('d', 'v'), '/r/d/staging/v');
    assert.equal(paths.target('d', 'w', 'v'), '/r/d/per-workload/w/v');
    assert.equal(paths.workloadDir('d', 'w'), '/r/d/per-workload/w');
  });
});

describe('mount table', () => {
  it('reads mount points from mountinfo, unescaping octal escapes', () => {
    const text = [
      '22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
      '40 22 0:35 / /mnt/with\\040space rw - tmpfs tmpfs rw',
      '41 40 0:35 /v /mnt/with\\040space/t rw - tmpfs tmpfs rw',
      '',
    ].join('\n');
    assert.deepEqual([...parseMountPoints(text)], ['/', '/mnt/with space', '/mnt/with space/t']);
    const dir = createTempDir();
    try {
      writeFileSync(dir.join('mountinfo'), text);
      const table = readMountTable(dir.join('mountinfo'));
      assert.equal(table.isMountPoint('/mnt/with space/t'), true);
      assert.equal(table.isMountPoint('/mnt/with'), false);
      assert.deepEqual(table.under('/mnt/with space'), ['/mnt/with space', '/mnt/with space/t']);
    } finally {
      dir.remove();
    }
  });
});

describe('the per-volume queue', () => {
  it('runs one operation per volume at a time, others concurrently', async () => {
    const queue = new VolumeQueue();
    const order: string[] = [];
    let release: () => void = () => {};
    const first = queue.run('v1', Date.now() + 10_000, 'a', async () => {
      order.push('a start');
      await new Promise<void>((resolve) => (release = resolve));
      order.push('a end');
    });
    const second = queue.run('v1', Date.now() + 10_000, 'b', async () => void order.push('b'));
    await queue.run('v2', Date.now() + 10_000, 'c', async () => void order.push('c'));
    assert.equal(queue.busy('v1'), true);
    release();
    await Promise.all([first, second]);
    assert.deepEqual(order, ['a start', 'c', 'a end', 'b']);
    assert.equal(queue.busy('v1'), false);
  });
  it('rejects a waiter whose deadline passes (503, retry) and never runs it', async () => {
    const queue = new VolumeQueue();
    let release: () => void = () => {};
    const held = queue.run('v', Date.now() + 10_000, 'hold', () => new Promise<void>((r) => (release = r)));
    let ran = false;
    await assert.rejects(
      queue.run('v', Date.now() + 20, 'late', async () => {
        ran = true;
      }),
      (err: unknown) =>
        err instanceof BerthError &&
        err.code === 'BERTH_CSI_DRIVER_UNAVAILABLE' &&
        err.details.retryAfterSeconds === 5,
    );
    release();
    await held;
    await queue.run('v', Date.now() + 1000, 'after', async () => {});
    assert.equal(ran, false);
  });
});

describe('CSI inline volumes of a pod', () => {
  it("derives the volume id as the kubelet's makeVolumeHandle does", () => {
    // printf 'uid-1scratch' | sha256sum: podUID and volume name with no separator
    assert.equal(
      ephemeralVolumeId('uid-1', 'scratch'),
      'csi-a919eb5a57ed1bf8c61a802fc713b36e9bfa4fbf009dfb5f4206d253a3a3dc32',
    );
    assert.match(ephemeralVolumeId('uid-1', 'scratch'), /^csi-[0-9a-f]{64}$/);
    assert.notEqual(ephemeralVolumeId('uid-1', 'scratch'), ephemeralVolumeId('uid-2', 'scratch'));
  });
  it('reads spec.volumes[].csi and names a malformed field', () => {
    const pod = (volumes: unknown) => ({
      metadata: { name: 'p', namespace: 'n', uid: 'u' },
      spec: { volumes },
    });
    assert.deepEqual(
      inlineVolumesOf(
        pod([
          { name: 'a', csi: { driver: 'd', readOnly: true, volumeAttributes: { k: 'v' } } },
          { name: 'b', emptyDir: {} },
        ]),
      ),
      [{ name: 'a', driver: 'd', readOnly: true, fsType: undefined, attributes: { k: 'v' } }],
    );
    assert.throws(
      () => inlineVolumesOf(pod([{ name: 'a', csi: {} }])),
      /spec\.volumes\[0\]\.csi\.driver: required/,
    );
    assert.throws(
      () => inlineVolumesOf(pod([{ name: 'a', csi: { driver: 'd', volumeAttributes: { k: 1 } } }])),
      /spec\.volumes\[0\]\.csi\.volumeAttributes\.k: expected a string/,
    );
  });
});

describe('the volume manager without a driver', () => {
  it('answers 404 for an unknown driver and keeps nothing', async () => {
    const dir = createTempDir();
    const manager = new VolumeManager({
      statePath: dir.join('v.db'),
      mountRoot: dir.join('csi'),
      drivers: { lookup: () => undefined },
      callTimeoutMs: 1000,
      operationTimeoutMs: 1000,
      clock: new FakeClock(),
      logger: silentLogger,
    });
    try {
      await manager.start();
      await assert.rejects(
        manager.publish('d.example.com', 'v', { workload: 'w' }),
        /CSI driver d\.example\.com is not registered/,
      );
      await assert.rejects(
        manager.create({ driver: 'd.example.com', name: 'n' }),
        (err: unknown) => err instanceof BerthError && err.code === 'BERTH_CSI_DRIVER_NOT_FOUND',
      );
      assert.deepEqual(await manager.list(), []);
    } finally {
      await manager.stop();
      dir.remove();
    }
  });
});

describe('the volume manager in observe mode', () => {
  it('opens nothing, lists nothing and refuses every operation with BERTH_OBSERVE_ONLY', async () => {
    const dir = createTempDir();
    const manager = new VolumeManager({
      statePath: dir.join('v.db'),
      mountRoot: dir.join('csi'),
      drivers: { lookup: () => ({ endpoint: dir.join('none.sock'), nodeId: 'n' }) },
      callTimeoutMs: 1000,
      operationTimeoutMs: 1000,
      clock: new FakeClock(),
      logger: silentLogger,
      observe: true,
    });
    try {
      await manager.start();
      const observeOnly = (err: unknown) => err instanceof BerthError && err.code === 'BERTH_OBSERVE_ONLY';
      await assert.rejects(manager.create({ driver: 'd', name: 'n' }), observeOnly);
      await assert.rejects(manager.publish('d', 'v', { workload: 'w' }), observeOnly);
      await assert.rejects(manager.unpublish('d', 'v', 'w'), observeOnly);
      await assert.rejects(manager.delete('d', 'v'), observeOnly);
      assert.deepEqual(await manager.list(), []);
      assert.equal(existsSync(dir.join('v.db')), false);
      assert.equal(existsSync(dir.join('csi')), false);
    } finally {
      await manager.stop();
      dir.remove();
    }
  });
});

describe('the CSI volume store', () => {
  it('has no file until its first write, then creates it owner-only and reads it back after a reopen', (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state', 'csi-volumes.db');
    const store = new VolumeStore(path);
    t.after(() => store.close());
    assert.deepEqual(store.load(), { volumes: [], attachments: [], publications: [], problems: [] });
    assert.equal(existsSync(path), false, 'nothing recorded, no file');
    store.putVolume({
      driver: 'hostpath.csi.example.com',
      volumeId: 'v1',
      name: 'data',
      capacityBytes: 1024,
      volumeContext: {},
      accessibleTopology: [],
      createdAt: 1,
    });
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const reopened = new VolumeStore(path);
    t.after(() => reopened.close());
    assert.deepEqual(
      reopened.load().volumes.map((v) => [v.driver, v.volumeId, v.name]),
      [['hostpath.csi.example.com', 'v1', 'data']],
    );
  });
});
