/**
 * CSI ephemeral inline volumes through `berth pods apply` and `berth pods
 * delete`, with real mounts: each `spec.volumes[].csi` is published for the
 * pod's uid (NodePublishVolume only, volume id as the kubelet derives it,
 * `csi.storage.k8s.io/ephemeral: "true"`), `podVolumes` shows the targets,
 * and deleting the pod unpublishes them. A pod whose volumes cannot all be
 * published is refused and leaves no mount. Once with a driver on Python
 * grpcio and once on grpc-go.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createVolumesHarness, mountsUnder, requireMountsAndStack } from './fixtures/csi-volumes-harness.js';

for (const stack of ['python', 'go'] as const)
  test(`CSI inline volumes of a pod: apply publishes, delete unpublishes (${stack === 'go' ? 'grpc-go' : 'Python grpcio'} driver)`, {
    timeout: 240_000,
  }, async (t) => {
    if (!requireMountsAndStack(t, stack)) return;
    const h = await createVolumesHarness(t);
    await h.startDaemon();
    const name = 'inline.csi.example.com';
    // A driver that stages: ephemeral volumes must still get neither NodeStage nor ControllerPublish.
    const driver = await h.startDriver(name, ['--stage', '--attach'], stack);
    const uid = '5f0c2a77-1111-4c6e-9d7e-0123456789ab';
    const manifest = join(h.root, 'pod.yaml');
    writeFileSync(
      manifest,
      [
        'apiVersion: v1',
        'kind: Pod',
        'metadata:',
        '  name: web',
        `  uid: ${uid}`,
        'spec:',
        '  containers: [{name: app, image: busybox}]',
        '  volumes:',
        '    - name: scratch',
        `      csi: {driver: ${name}, volumeAttributes: {size: 1Mi}}`,
        '    - name: config',
        `      csi: {driver: ${name}, readOnly: true}`,
        '    - name: plain',
        '      emptyDir: {}',
        '',
      ].join('\n'),
    );
    const applied = await h.cliJson(['pods', 'apply', '-f', manifest]);
    const volumeIdOf = (volumeName: string) =>
      `csi-${createHash('sha256')
        .update(uid + volumeName)
        .digest('hex')}`;
    const targetOf = (volumeName: string) =>
      join(h.mountRoot, name, 'per-workload', uid, volumeIdOf(volumeName));
    assert.deepEqual(applied.pod.podVolumes, [
      {
        name: 'scratch',
        driver: name,
        volumeId: volumeIdOf('scratch'),
        targetPath: targetOf('scratch'),
        readOnly: false,
      },
      {
        name: 'config',
        driver: name,
        volumeId: volumeIdOf('config'),
        targetPath: targetOf('config'),
        readOnly: true,
      },
    ]);
    assert.deepEqual(mountsUnder(h.mountRoot).sort(), [targetOf('config'), targetOf('scratch')].sort());
    assert.equal(h.calls(driver, 'NodePublishVolume'), 2);
    assert.equal(h.calls(driver, 'NodeStageVolume'), 0);
    assert.equal(h.calls(driver, 'ControllerPublishVolume'), 0);
    writeFileSync(join(targetOf('scratch'), 'data'), 'scratch space');
    assert.throws(() => writeFileSync(join(targetOf('config'), 'data'), 'x'), /EROFS/);

    // The volumes list shows them as the pod's, with the kubelet's volume context.
    const listed = (await h.cliJson(['csi', 'volumes', 'list'])).volumes;
    const scratch = listed.find((v: { volumeId: string }) => v.volumeId === volumeIdOf('scratch'));
    assert.equal(scratch.publications[0].workload, uid);
    assert.equal(scratch.publications[0].ephemeral, true);
    assert.deepEqual(scratch.publications[0].volumeContext, {
      'csi.storage.k8s.io/ephemeral': 'true',
      'csi.storage.k8s.io/pod.name': 'web',
      'csi.storage.k8s.io/pod.namespace': 'default',
      'csi.storage.k8s.io/pod.uid': uid,
      size: '1Mi',
    });
    // Applying the same pod again changes nothing.
    const reapplied = await h.cliJson(['pods', 'apply', '-f', manifest]);
    assert.deepEqual(reapplied.pod.podVolumes, applied.pod.podVolumes);
    assert.equal(h.calls(driver, 'NodePublishVolume'), 2);
    const table = await h.cli(['pods', 'list']);
    assert.match(table.stdout, /web\s+5f0c2a77-\S+\s+-\s+-\s+scratch,config/);

    const deleted = await h.cli(['pods', 'delete', 'default/web']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /csi volumes: scratch at \S+, config at \S+/);
    assert.equal(h.calls(driver, 'NodeUnpublishVolume'), 2);
    assert.deepEqual(mountsUnder(h.root), [h.root]);
    assert.equal(existsSync(join(h.mountRoot, name, 'per-workload', uid)), false);
    // The driver freed the ephemeral storage.
    assert.deepEqual(
      readdirSync(join(h.root, `state-${name}`)).filter((f) => f.startsWith('ephemeral-')),
      [],
    );
    assert.deepEqual((await h.cliJson(['csi', 'volumes', 'list'])).volumes, []);

    // A pod whose second volume fails: refused, the first undone, no mount, not registered.
    const failing = join(h.root, 'failing.yaml');
    writeFileSync(
      failing,
      [
        'metadata: {name: broken, uid: 0000-broken}',
        'spec:',
        '  volumes:',
        `    - {name: good, csi: {driver: ${name}}}`,
        `    - {name: bad, csi: {driver: ${name}, volumeAttributes: {fail: "yes"}}}`,
        '',
      ].join('\n'),
    );
    const refused = await h.cli(['pods', 'apply', '-f', failing]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /volumeAttributes asked this publish to fail/);
    assert.deepEqual(mountsUnder(h.root), [h.root]);
    assert.deepEqual((await h.cliJson(['pods', 'list'])).pods, []);
    assert.deepEqual((await h.cliJson(['csi', 'volumes', 'list'])).volumes, []);

    // An inline volume naming a driver that is not registered: 404 naming it, nothing registered.
    const unknown = join(h.root, 'unknown.yaml');
    writeFileSync(
      unknown,
      'metadata: {name: lost, uid: 0000-lost}\nspec:\n  volumes:\n    - {name: v, csi: {driver: gone.example.com}}\n',
    );
    const lost = await h.cli(['pods', 'apply', '-f', unknown]);
    assert.notEqual(lost.code, 0);
    assert.match(lost.stderr, /gone\.example\.com/);
    assert.deepEqual((await h.cliJson(['pods', 'list'])).pods, []);
  });
