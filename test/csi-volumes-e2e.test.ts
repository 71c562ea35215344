/**
 * The CSI volumes API with real mounts (as root, on a private tmpfs): `berth
 * run` as a child process, a CSI driver that bind-mounts for real, and the
 * `berth csi volumes` CLI. The driver runs on two foreign gRPC stacks, Python
 * grpcio (C-core) and grpc-go (what most production CSI drivers use), each
 * once staging (and controller-publishing) and once doing neither: create →
 * publish for two workloads → one stage, two publishes; write through one
 * target, read through the other; kill -9 berth, restart, list; unpublish
 * both → unstaged, no mounts left; delete.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createVolumesHarness, mountsUnder, requireMountsAndStack } from './fixtures/csi-volumes-harness.js';

for (const stack of ['python', 'go'] as const)
  for (const mode of ['stage', 'no-stage'] as const) {
    const stages = mode === 'stage';
    test(`CSI volume lifecycle with a ${stack === 'go' ? 'grpc-go' : 'Python grpcio'} driver ${stages ? 'that stages and attaches' : 'that neither stages nor attaches'}`, {
      timeout: 240_000,
    }, async (t) => {
      if (!requireMountsAndStack(t, stack)) return;
      const h = await createVolumesHarness(t);
      await h.startDaemon();
      const name = `${stages ? 'stage' : 'plain'}.${stack}.csi.example.com`;
      const driver = await h.startDriver(name, stages ? ['--stage', '--attach'] : [], stack);

      // create, twice: idempotent by name
      const created = await h.cliJson(['csi', 'volumes', 'create', name, 'data', '--capacity', '1048576']);
      assert.equal(created.driver, name);
      assert.match(created.volumeId, /^vol-[0-9a-f]{12}$/);
      assert.equal(created.capacityBytes, 1048576);
      assert.deepEqual(created.volumeContext, { 'made-by': stack });
      const again = await h.cliJson(['csi', 'volumes', 'create', name, 'data', '--capacity', '1048576']);
      assert.equal(again.volumeId, created.volumeId);
      const volumeId: string = created.volumeId;

      // publish for two workloads, the first twice (idempotent)
      const one = await h.cliJson(['csi', 'volumes', 'publish', name, volumeId, 'job-a']);
      const oneAgain = await h.cliJson(['csi', 'volumes', 'publish', name, volumeId, 'job-a']);
      const two = await h.cliJson(['csi', 'volumes', 'publish', name, volumeId, 'job-b']);
      assert.deepEqual(oneAgain, one);
      assert.equal(one.targetPath, join(h.mountRoot, name, 'per-workload', 'job-a', volumeId));
      assert.equal(two.targetPath, join(h.mountRoot, name, 'per-workload', 'job-b', volumeId));
      const stagingPath = join(h.mountRoot, name, 'staging', volumeId);
      assert.equal(one.stagingPath, stages ? stagingPath : null);
      assert.equal(h.calls(driver, 'NodeStageVolume'), stages ? 1 : 0);
      assert.equal(h.calls(driver, 'ControllerPublishVolume'), stages ? 1 : 0);
      assert.equal(h.calls(driver, 'NodePublishVolume'), 2);
      const expectedMounts = [one.targetPath, two.targetPath, ...(stages ? [stagingPath] : [])].sort();
      assert.deepEqual(mountsUnder(h.mountRoot).sort(), expectedMounts);

      // write through one target, read through the other
      writeFileSync(join(one.targetPath, 'hello.txt'), `from job-a (${stack}, ${mode})`);
      assert.equal(readFileSync(join(two.targetPath, 'hello.txt'), 'utf8'), `from job-a (${stack}, ${mode})`);

      // kill -9 berth, start it again: the publications are still there, mounted
      await h.killDaemon();
      await h.startDaemon();
      const listed = await h.cliJson(['csi', 'volumes', 'list']);
      assert.equal(listed.volumes.length, 1);
      const volume = listed.volumes[0];
      assert.equal(volume.volumeId, volumeId);
      assert.equal(volume.name, 'data');
      assert.equal(volume.driverRegistered, true);
      assert.equal(volume.controllerPublished, stages);
      assert.deepEqual(volume.staging, stages ? { path: stagingPath, mounted: true } : null);
      assert.deepEqual(
        volume.publications.map((p: { workload: string; status: string; mounted: boolean }) => [
          p.workload,
          p.status,
          p.mounted,
        ]),
        [
          ['job-a', 'published', true],
          ['job-b', 'published', true],
        ],
      );
      // NodeGetVolumeStats (the driver offers GET_VOLUME_STATS): the tmpfs's size
      const bytes = volume.stats.usage.find((u: { unit: string }) => u.unit === 'BYTES');
      assert.equal(bytes.total, 64 * 1024 * 1024);
      const table = await h.cli(['csi', 'volumes', 'list']);
      assert.match(
        table.stdout,
        /^DRIVER\s+VOLUME\s+NAME\s+STAGING\s+BYTES USED\s+WORKLOAD\s+STATUS\s+TARGET$/m,
      );
      assert.match(table.stdout, new RegExp(`job-b\\s+published\\s+${two.targetPath}`));
      // After the restart a publish of a mounted publication is still a no-op.
      await h.cliJson(['csi', 'volumes', 'publish', name, volumeId, 'job-b']);
      assert.equal(h.calls(driver, 'NodePublishVolume'), 2);

      // A target that vanished (unmounted behind berth's back) is flagged, and a publish repairs it.
      execFileSync('umount', [two.targetPath]);
      const flagged = (await h.cliJson(['csi', 'volumes', 'list'])).volumes[0].publications[1];
      assert.deepEqual([flagged.workload, flagged.status, flagged.mounted], ['job-b', 'vanished', false]);
      const repaired = await h.cliJson(['csi', 'volumes', 'publish', name, volumeId, 'job-b']);
      assert.equal(repaired.targetPath, two.targetPath);
      assert.equal(h.calls(driver, 'NodePublishVolume'), 3);
      assert.equal(readFileSync(join(two.targetPath, 'hello.txt'), 'utf8'), `from job-a (${stack}, ${mode})`);
      const healed = (await h.cliJson(['csi', 'volumes', 'list'])).volumes[0].publications[1];
      assert.deepEqual([healed.status, healed.mounted], ['published', true]);

      // the volume is in use: delete is refused
      const busy = await h.http('DELETE', `/v1/csi/volumes/${name}/${volumeId}`);
      assert.equal(busy.status, 409);
      assert.match(busy.json.error.message, /published for job-a, job-b/);

      // unpublish the first: the volume stays staged for the second
      await h.cliJson(['csi', 'volumes', 'unpublish', name, volumeId, 'job-a']);
      assert.equal(h.calls(driver, 'NodeUnstageVolume'), 0);
      assert.deepEqual(
        mountsUnder(h.mountRoot).sort(),
        [two.targetPath, ...(stages ? [stagingPath] : [])].sort(),
      );
      assert.equal(existsSync(join(h.mountRoot, name, 'per-workload', 'job-a')), false);
      // the last one: unstage and controller unpublish, no mount left anywhere under the root
      await h.cliJson(['csi', 'volumes', 'unpublish', name, volumeId, 'job-b']);
      assert.equal(h.calls(driver, 'NodeUnpublishVolume'), 2);
      assert.equal(h.calls(driver, 'NodeUnstageVolume'), stages ? 1 : 0);
      assert.equal(h.calls(driver, 'ControllerUnpublishVolume'), stages ? 1 : 0);
      assert.deepEqual(mountsUnder(h.root), [h.root]);
      assert.equal(existsSync(stagingPath), false);
      assert.equal(existsSync(join(h.mountRoot, name, 'per-workload', 'job-b')), false);

      // delete
      const deleted = await h.cliJson(['csi', 'volumes', 'delete', name, volumeId]);
      assert.deepEqual(deleted, { driver: name, volumeId });
      assert.equal(h.calls(driver, 'DeleteVolume'), 1);
      assert.deepEqual((await h.cliJson(['csi', 'volumes', 'list'])).volumes, []);
      assert.equal((await h.cli(['csi', 'volumes', 'list'])).stdout.trim(), 'no CSI volumes');
    });
  }
