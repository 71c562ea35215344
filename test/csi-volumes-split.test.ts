/**
 * A CSI driver deployed as two plugins (Nomad's csi-controller and csi-node;
 * a controller Deployment beside a node DaemonSet in Kubernetes): the
 * controller registers as `csi-controller`, the node plugin as the kubelet's
 * `CSIPlugin`, both on grpc-go (test/fixtures/go/csi-driver --role), with
 * real mounts as root. Controller calls must go to the controller plugin and
 * node calls to the node plugin, the node plugin learning the attachment from
 * the publish context; creating and deleting volumes need only the controller.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createVolumesHarness, mountsUnder, requireMountsAndStack } from './fixtures/csi-volumes-harness.js';

test('CSI volumes on a driver split into a csi-controller and a node plugin (grpc-go)', {
  timeout: 240_000,
}, async (t) => {
  if (!requireMountsAndStack(t, 'go')) return;
  const h = await createVolumesHarness(t);
  await h.startDaemon();
  const name = 'split.go.csi.example.com';
  const stateDir = ['--state-dir', join(h.root, 'backend')];
  const controller = await h.startDriver(
    name,
    ['--role', 'controller', '--attach', ...stateDir, '--endpoint', join(h.root, 'controller.sock')],
    'go',
  );
  const node = await h.startDriver(
    name,
    [
      ...['--role', 'node', '--stage', '--attach', ...stateDir],
      ...[
        '--socket',
        join(h.dataDir, 'plugins_registry', 'node-reg.sock'),
        '--endpoint',
        join(h.root, 'node.sock'),
      ],
    ],
    'go',
  );
  const calls = (driver: typeof node) =>
    driver.stdout
      .map((line) => JSON.parse(line) as { event: string; method?: string })
      .filter((e) => e.event === 'call')
      .map((e) => e.method as string);
  const only = (driver: typeof node, methods: string[]) => calls(driver).filter((m) => methods.includes(m));
  const controllerMethods = [
    'CreateVolume',
    'DeleteVolume',
    'ControllerPublishVolume',
    'ControllerUnpublishVolume',
  ];
  const nodeMethods = ['NodeStageVolume', 'NodePublishVolume', 'NodeUnpublishVolume', 'NodeUnstageVolume'];

  // The registry holds both plugins, each under its own type.
  const plugins = await h.http('GET', '/v1/plugins');
  const mine = (
    plugins.json.plugins as Array<{ type: string; name: string; options: Record<string, string> }>
  ).filter((p) => p.name === name);
  assert.deepEqual(mine.map((p) => p.type).sort(), ['CSIPlugin', 'csi-controller'].sort());
  assert.equal(
    mine.find((p) => p.type === 'csi-controller')?.options['csi.controllerCapabilities'],
    '["CREATE_DELETE_VOLUME","PUBLISH_UNPUBLISH_VOLUME"]',
  );

  const created = await h.cliJson(['csi', 'volumes', 'create', name, 'data', '--capacity', '4096']);
  assert.match(created.volumeId, /^vol-[0-9a-f]{12}$/);
  const volumeId: string = created.volumeId;
  const published = await h.cliJson(['csi', 'volumes', 'publish', name, volumeId, 'job-a']);
  writeFileSync(join(published.targetPath, 'note.txt'), 'through the node plugin');
  assert.equal(
    readFileSync(join(h.root, 'backend', volumeId, 'note.txt'), 'utf8'),
    'through the node plugin',
  );
  await h.cliJson(['csi', 'volumes', 'unpublish', name, volumeId, 'job-a']);
  assert.deepEqual(mountsUnder(h.root), [h.root]);
  await h.cliJson(['csi', 'volumes', 'delete', name, volumeId]);

  // Controller calls on the controller plugin only, node calls on the node plugin only.
  assert.deepEqual(only(controller, controllerMethods), [
    'CreateVolume',
    'ControllerPublishVolume',
    'ControllerUnpublishVolume',
    'DeleteVolume',
  ]);
  assert.deepEqual(only(controller, nodeMethods), []);
  assert.deepEqual(only(node, nodeMethods), nodeMethods);
  assert.deepEqual(only(node, controllerMethods), []);

  // With the node plugin gone, volumes can still be created and deleted through the controller;
  // publishing needs the node plugin: 503 (berth knows the driver, it is away), nothing mounted.
  await h.stopDriver(node);
  const second = await h.cliJson(['csi', 'volumes', 'create', name, 'more', '--capacity', '4096']);
  const away = await h.http(
    'POST',
    `/v1/csi/volumes/${encodeURIComponent(name)}/${encodeURIComponent(second.volumeId)}/publications`,
    { workload: 'job-b' },
  );
  assert.equal(away.status, 503, JSON.stringify(away.json));
  assert.deepEqual(mountsUnder(h.root), [h.root]);
  assert.deepEqual(await h.cliJson(['csi', 'volumes', 'delete', name, second.volumeId]), {
    driver: name,
    volumeId: second.volumeId,
  });
  assert.equal(calls(controller).filter((m) => m === 'DeleteVolume').length, 2);
});
