/**
 * The CSI volumes API's refusals, each with its status, a message naming what
 * is wrong, and no mount (or directory) left behind: unknown driver or
 * volume → 404; names that would escape the mount root → 400; a missing
 * capability → 409 naming it; the same volume and workload with other options
 * → 409; the driver's ResourceExhausted → 507; a driver that is away → 503
 * with Retry-After, its publications kept until it is back. Once with a driver
 * on Python grpcio and once on grpc-go.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createVolumesHarness, mountsUnder, requireMountsAndStack } from './fixtures/csi-volumes-harness.js';

for (const stack of ['python', 'go'] as const)
  test(`CSI volumes: bad input is refused, naming the problem, and leaves no mount (${stack === 'go' ? 'grpc-go' : 'Python grpcio'} driver)`, {
    timeout: 240_000,
  }, async (t) => {
    if (!requireMountsAndStack(t, stack)) return;
    const h = await createVolumesHarness(t);
    await h.startDaemon();
    const name = 'strict.csi.example.com';
    let driver = await h.startDriver(name, ['--stage', '--attach'], stack);
    const bare = 'bare.csi.example.com';
    await h.startDriver(bare, ['--no-create'], stack);
    const noMounts = () => assert.deepEqual(mountsUnder(h.root), [h.root]);
    const publications = (driverName: string, volumeId: string) =>
      `/v1/csi/volumes/${encodeURIComponent(driverName)}/${encodeURIComponent(volumeId)}/publications`;

    // unknown driver → 404 naming it
    const noDriver = await h.http('POST', '/v1/csi/volumes', { driver: 'nope.example.com', name: 'x' });
    assert.equal(noDriver.status, 404);
    assert.equal(noDriver.json.error.code, 'BERTH_CSI_DRIVER_NOT_FOUND');
    assert.match(noDriver.json.error.message, /nope\.example\.com/);
    const noDriverPublish = await h.http('POST', publications('nope.example.com', 'v1'), { workload: 'w' });
    assert.equal(noDriverPublish.status, 404);

    // a volume that does not exist → 404 naming it, nothing left under the mount root
    const noVolume = await h.http('POST', publications(name, 'vol-missing'), { workload: 'w1' });
    assert.equal(noVolume.status, 404);
    assert.equal(noVolume.json.error.code, 'BERTH_CSI_VOLUME_NOT_FOUND');
    assert.match(noVolume.json.error.message, /vol-missing/);
    noMounts();
    assert.equal(existsSync(join(h.mountRoot, name, 'staging', 'vol-missing')), false);
    assert.equal(existsSync(join(h.mountRoot, name, 'per-workload', 'w1')), false);
    assert.deepEqual((await h.http('GET', '/v1/csi/volumes')).json.volumes, []);
    const noVolumeDelete = await h.http('DELETE', `/v1/csi/volumes/${name}/vol-missing`);
    assert.equal(noVolumeDelete.status, 404);
    assert.match(noVolumeDelete.json.error.message, /vol-missing/);
    const noPublication = await h.http('DELETE', `${publications(name, 'vol-missing')}/w1`);
    assert.equal(noPublication.status, 404);

    const { json: volume } = await h.http('POST', '/v1/csi/volumes', { driver: name, name: 'vol' });
    const volumeId: string = volume.volumeId;

    // names that would escape the mount root → 400, before any driver call
    const publishesBefore = h.calls(driver, 'NodePublishVolume');
    for (const [workload, why] of [
      ['..', /escape/],
      ['a/b', /contains "\/"/],
      ['bad\0name', /NUL/],
      ['x'.repeat(129), /129 bytes/],
    ] as const) {
      const answer = await h.http('POST', publications(name, volumeId), { workload });
      assert.equal(answer.status, 400, JSON.stringify(answer.json));
      assert.match(answer.json.error.message, /^workload: /);
      assert.match(answer.json.error.message, why);
    }
    for (const segment of ['%2E%2E', 'a%2Fb', 'bad%00', 'y'.repeat(129)]) {
      const viaPath = await h.http('DELETE', `${publications(name, volumeId)}/${segment}`);
      assert.equal(viaPath.status, 400, `${segment}: ${JSON.stringify(viaPath.json)}`);
      const volumeInPath = await h.http('POST', `/v1/csi/volumes/${name}/${segment}/publications`, {
        workload: 'w',
      });
      assert.equal(volumeInPath.status, 400, `${segment}: ${JSON.stringify(volumeInPath.json)}`);
      assert.match(volumeInPath.json.error.message, /^volumeId: /);
    }
    assert.equal(h.calls(driver, 'NodePublishVolume'), publishesBefore);
    noMounts();

    // a driver without the capability → 409 naming it
    const noCreate = await h.http('POST', '/v1/csi/volumes', { driver: bare, name: 'x' });
    assert.equal(noCreate.status, 409);
    assert.equal(noCreate.json.error.code, 'BERTH_CSI_CAPABILITY_MISSING');
    assert.match(noCreate.json.error.message, /CREATE_DELETE_VOLUME/);

    // the driver's ResourceExhausted → 507, its message passed through
    const exhausted = await h.http('POST', '/v1/csi/volumes', {
      driver: name,
      name: 'big',
      parameters: { fail: 'exhausted' },
    });
    assert.equal(exhausted.status, 507);
    assert.match(exhausted.json.error.message, /ResourceExhausted desc = no capacity left for big/);

    // NodePublish fails after a fresh ControllerPublish and NodeStage: both are undone, nothing is left
    const counts = () =>
      ['ControllerPublishVolume', 'NodeStageVolume', 'NodeUnstageVolume', 'ControllerUnpublishVolume'].map(
        (m) => h.calls(driver, m),
      );
    const before = counts();
    const failed = await h.http('POST', publications(name, volumeId), {
      workload: 'w9',
      volumeContext: { fail: 'yes' },
    });
    assert.equal(failed.status, 400);
    assert.equal(failed.json.error.code, 'BERTH_CSI_INVALID_ARGUMENT');
    assert.match(failed.json.error.message, /NodePublishVolume .*asked this publish to fail/);
    // one ControllerPublish, NodeStage, NodeUnstage and ControllerUnpublish each
    assert.deepEqual(
      counts(),
      before.map((n) => n + 1),
    );
    noMounts();
    assert.equal(existsSync(join(h.mountRoot, name, 'staging', volumeId)), false);
    assert.equal(existsSync(join(h.mountRoot, name, 'per-workload', 'w9')), false);
    const afterFailure = (await h.http('GET', '/v1/csi/volumes')).json.volumes;
    assert.deepEqual(
      afterFailure.map(
        (v: {
          volumeId: string;
          publications: unknown[];
          staging: unknown;
          controllerPublished: boolean;
        }) => [v.volumeId, v.publications, v.staging, v.controllerPublished],
      ),
      [[volumeId, [], null, false]],
    );

    // the same volume and workload with other options → 409, the first publication untouched
    const first = await h.http('POST', publications(name, volumeId), { workload: 'w1' });
    assert.equal(first.status, 200);
    const other = await h.http('POST', publications(name, volumeId), { workload: 'w1', readOnly: true });
    assert.equal(other.status, 409);
    assert.equal(other.json.error.code, 'BERTH_CSI_CONFLICT');
    assert.match(other.json.error.message, /already published for w1 with other options/);
    assert.deepEqual(
      mountsUnder(h.mountRoot).sort(),
      [first.json.targetPath, join(h.mountRoot, name, 'staging', volumeId)].sort(),
    );
    const badMode = await h.http('POST', publications(name, volumeId), {
      workload: 'w2',
      accessMode: 'sometimes',
    });
    assert.equal(badMode.status, 400);
    assert.match(badMode.json.error.message, /^accessMode: expected one of single-node-writer/);

    // the driver goes away: its volume stays recorded, requests get 503 with Retry-After
    await h.stopDriver(driver);
    await t.test('the driver leaves the registry', async () => {
      const { waitFor } = await import('../src/testing/index.js');
      await waitFor(
        'the driver to deregister',
        async () =>
          (await h.http('GET', '/v1/csi/drivers')).json.drivers.every(
            (d: { name: string }) => d.name !== name,
          ),
        { timeoutMs: 60_000, intervalMs: 100 },
      );
    });
    const away = await h.http('DELETE', `${publications(name, volumeId)}/w1`);
    assert.equal(away.status, 503);
    assert.equal(away.json.error.code, 'BERTH_CSI_DRIVER_UNAVAILABLE');
    assert.equal(away.headers['retry-after'], '5');
    assert.match(away.json.error.message, /not registered right now/);
    const awayPublish = await h.http('POST', publications(name, volumeId), { workload: 'w3' });
    assert.equal(awayPublish.status, 503);
    const listedAway = (await h.http('GET', '/v1/csi/volumes')).json.volumes;
    assert.equal(listedAway[0].driverRegistered, false);
    assert.equal(listedAway[0].publications[0].workload, 'w1');
    assert.equal(listedAway[0].publications[0].mounted, true);

    // back again: unpublish goes through and leaves nothing
    driver = await h.startDriver(name, ['--stage', '--attach'], stack);
    const unpublished = await h.http('DELETE', `${publications(name, volumeId)}/w1`);
    assert.equal(unpublished.status, 200, JSON.stringify(unpublished.json));
    assert.equal(h.calls(driver, 'NodeUnstageVolume'), 1);
    noMounts();
    assert.deepEqual(readdirSync(join(h.mountRoot, name, 'per-workload')), []);
    assert.deepEqual(readdirSync(join(h.mountRoot, name, 'staging')), []);
    const deleted = await h.http('DELETE', `/v1/csi/volumes/${name}/${volumeId}`);
    assert.equal(deleted.status, 200);
  });
