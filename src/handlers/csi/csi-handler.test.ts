/**
 * The CSI handler against real CSI drivers on unix sockets: the kubelet's
 * csi_plugin_test.go scenarios (TestValidatePlugin,
 * TestValidatePluginExistingDriver, TestHighestSupportedVersion) and what
 * berth adds after registration.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBerthError } from '../../common/index.js';
import { type CsiTestDriver, recordingServices, startCsiTestDriver } from '../../testing/harness/index.js';
import { createTempDir, type TempDir, waitFor } from '../../testing/index.js';
import { highestSupportedVersion } from '../generic-version.js';
import type { PluginCallContext } from '../types.js';
import { createCsiHandler } from './csi-handler.js';

const ENDPOINT = '/var/lib/kubelet/plugins_registry/myplugin/csi.sock';
const ctx = (socketPath: string): PluginCallContext => ({
  type: 'CSIPlugin',
  socketPath,
  foundInDeprecatedDir: false,
});

const accepted: Array<[string[], string]> = [
  [['v1.0.0'], '1.0.0'],
  [['0.2.0', 'v1.0.0'], '1.0.0'],
  [['0.2.0', 'v1.2.3'], '1.2.3'],
  [['v1.2.3', 'v0.3.0'], '1.2.3'],
  [['v1.2.3', 'v0.3.0', '2.0.1'], '1.2.3'],
  [['v1.2.3', '4.9.12', 'v0.3.0', '2.0.1'], '1.2.3'],
  [['v1.2.3', 'boo', 'v0.3.0', '2.0.1'], '1.2.3'],
];
const refused: string[][] = [
  ['0.3.0'],
  ['0.2.0'],
  ['0.2.0', 'v0.3.0'],
  ['4.9.12', '2.0.1'],
  [],
  ['var', 'boo', 'foo'],
];

async function validationError(versions: string[], name = 'test.plugin') {
  const handler = createCsiHandler(recordingServices());
  try {
    await handler.validatePlugin(name, ENDPOINT, versions, ctx('/r/a.sock'));
    return undefined;
  } catch (err) {
    assert.ok(isBerthError(err, 'BERTH_VALIDATION_FAILED'), String(err));
    return err.message;
  }
}

async function withDriver(t: { after(fn: () => unknown): void }, name = 'test.plugin') {
  const dir: TempDir = createTempDir();
  t.after(() => dir.remove());
  const driver: CsiTestDriver = await startCsiTestDriver(dir.join('csi.sock'), {
    name,
    nodeId: 'node-1',
    vendorVersion: '1.4.2',
    maxVolumesPerNode: 16,
    topology: { 'topology.example.com/zone': 'z1', 'topology.example.com/rack': 'r7' },
    capabilities: ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS'],
  });
  t.after(() => driver.stop());
  return { dir, driver };
}

describe('CSI handler: TestValidatePlugin / TestHighestSupportedVersion', () => {
  for (const [versions, highest] of accepted) {
    it(`accepts ${JSON.stringify(versions)} and picks ${highest}`, async () => {
      assert.equal(await validationError(versions), undefined);
      assert.equal(highestSupportedVersion(versions).toString(), highest);
    });
  }
  for (const versions of refused) {
    it(`refuses ${JSON.stringify(versions)} with the kubelet text`, async () => {
      const text = await validationError(versions);
      assert.ok(text !== undefined, 'refused');
      assert.ok(
        text.startsWith(
          `validation failed for CSI Driver test.plugin at endpoint ${ENDPOINT}: kubernetes.io/csi: ValidatePlugin for CSI driver "test.plugin" failed.`,
        ),
        text,
      );
    });
  }
  it('uses the exact texts for an empty list and a 0.x driver', async () => {
    assert.equal(
      await validationError([]),
      `validation failed for CSI Driver test.plugin at endpoint ${ENDPOINT}: kubernetes.io/csi: ValidatePlugin for CSI driver "test.plugin" failed. Plugin returned an empty list for supported versions`,
    );
    assert.equal(
      await validationError(['0.3.0']),
      `validation failed for CSI Driver test.plugin at endpoint ${ENDPOINT}: kubernetes.io/csi: ValidatePlugin for CSI driver "test.plugin" failed. None of the versions specified ["0.3.0"] are supported. err=highest supported version reported is 0.3.0, must be v1.x`,
    );
  });
});

describe('CSI handler: TestValidatePluginExistingDriver', () => {
  it('(a) a different name with the same version is accepted', async (t) => {
    const { driver } = await withDriver(t, 'driver-1');
    const handler = createCsiHandler(recordingServices());
    await handler.registerPlugin('driver-1', driver.socketPath, ['v1.0.0'], ctx('/r/1.sock'));
    await handler.validatePlugin('driver-2', ENDPOINT, ['v1.0.0'], ctx('/r/2.sock'));
  });

  it('(b) the same name with the same version is refused, at validate and at register', async (t) => {
    const { driver } = await withDriver(t, 'driver-1');
    const handler = createCsiHandler(recordingServices());
    await handler.registerPlugin('driver-1', driver.socketPath, ['v1.0.0'], ctx('/r/1.sock'));
    await assert.rejects(
      handler.validatePlugin('driver-1', ENDPOINT, ['v1.0.0'], ctx('/r/2.sock')),
      (err: unknown) =>
        isBerthError(err, 'BERTH_VALIDATION_FAILED') &&
        err.message ===
          `validation failed for CSI Driver driver-1 at endpoint ${ENDPOINT}: kubernetes.io/csi: ValidatePlugin for CSI driver "driver-1" failed. Another driver with the same name is already registered with a higher supported version: "1.0.0"`,
    );
    await assert.rejects(
      handler.registerPlugin('driver-1', driver.socketPath, ['v1.0.0'], ctx('/r/2.sock')),
      (err: unknown) =>
        isBerthError(err, 'BERTH_REGISTER_FAILED') &&
        err.message ===
          'kubernetes.io/csi: RegisterPlugin for CSI driver "driver-1" failed. Another driver with the same name is already registered with a higher supported version: "1.0.0"',
    );
  });

  it('(c) the same name moves to a strictly higher version at another endpoint', async (t) => {
    const { driver, dir } = await withDriver(t, 'driver-1');
    const second = await startCsiTestDriver(dir.join('csi-2.sock'), { name: 'driver-1', nodeId: 'node-1b' });
    t.after(() => second.stop());
    const handler = createCsiHandler(recordingServices());
    await handler.registerPlugin(
      'driver-1',
      driver.socketPath,
      ['0.3.0', '0.2.0', '1.0.0'],
      ctx('/r/1.sock'),
    );
    await handler.validatePlugin('driver-1', second.socketPath, ['v1.0.1'], ctx('/r/2.sock'));
    await handler.registerPlugin('driver-1', second.socketPath, ['v1.0.1'], ctx('/r/2.sock'));
    const [entry] = handler.drivers();
    assert.equal(entry?.version, '1.0.1');
    assert.equal(entry?.nodeId, 'node-1b');
    assert.equal(entry?.endpoint, second.socketPath);
    // The older instance going does not take the newer driver's entry with it.
    await handler.deRegisterPlugin('driver-1', driver.socketPath, ctx('/r/1.sock'));
    assert.equal(handler.drivers().length, 1);
    await handler.deRegisterPlugin('driver-1', second.socketPath, ctx('/r/2.sock'));
    assert.deepEqual(handler.drivers(), []);
  });
});

describe('CSI handler: after registration', () => {
  it('asks the driver four things and records the node facts', async (t) => {
    const { driver } = await withDriver(t);
    const services = recordingServices();
    const handler = createCsiHandler(services);
    await handler.validatePlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock'));
    await handler.registerPlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock'));
    // All four, concurrently on one connection (so in any order).
    assert.deepEqual([...driver.calls].sort(), [
      'GetPluginInfo',
      'NodeGetCapabilities',
      'NodeGetInfo',
      'Probe',
    ]);
    const [view] = handler.drivers();
    assert.ok(view);
    assert.deepEqual(
      { ...view, registeredAt: 0 },
      {
        name: 'test.plugin',
        nodeId: 'node-1',
        maxVolumesPerNode: 16,
        topologyKeys: ['topology.example.com/rack', 'topology.example.com/zone'],
        accessibleTopology: { 'topology.example.com/zone': 'z1', 'topology.example.com/rack': 'r7' },
        vendorVersion: '1.4.2',
        capabilities: ['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS'],
        ready: true,
        version: '1.0.0',
        endpoint: driver.socketPath,
        socketPath: '/r/a.sock',
        registeredAt: 0,
        warnings: [],
      },
    );
    assert.deepEqual(services.facts, [
      {
        instance: { type: 'CSIPlugin', name: 'test.plugin', socketPath: '/r/a.sock' },
        facts: {
          'csi.nodeId': 'node-1',
          'csi.maxVolumesPerNode': '16',
          'csi.accessibleTopology': JSON.stringify({
            'topology.example.com/zone': 'z1',
            'topology.example.com/rack': 'r7',
          }),
          'csi.vendorVersion': '1.4.2',
          'csi.capabilities': JSON.stringify(['STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS']),
        },
      },
    ]);
  });

  it('leaves the volume limit and topology unset when the driver reports none, as CSINode does', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const driver = await startCsiTestDriver(dir.join('csi.sock'), {
      name: 'bare',
      nodeId: 'n',
      ready: false,
    });
    t.after(() => driver.stop());
    const handler = createCsiHandler(recordingServices());
    await handler.registerPlugin('bare', driver.socketPath, ['1.0.0'], ctx('/r/b.sock'));
    const [view] = handler.drivers();
    assert.equal(view?.maxVolumesPerNode, null);
    assert.equal(view?.accessibleTopology, null);
    assert.deepEqual(view?.topologyKeys, []);
    assert.equal(view?.ready, false, 'Probe said not ready');
    assert.deepEqual(view?.capabilities, []);
  });

  it('fails the registration with the NodeGetInfo error, leaving nothing behind, so a retry can pass', async (t) => {
    const { driver } = await withDriver(t);
    driver.behaviour = { ...driver.behaviour, failNodeGetInfo: 'driver not ready yet' };
    const services = recordingServices();
    const handler = createCsiHandler(services);
    await assert.rejects(
      handler.registerPlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock')),
      (err: unknown) =>
        isBerthError(err, 'BERTH_REGISTER_FAILED') &&
        err.message ===
          'kubernetes.io/csi: registrationHandler.RegisterPlugin failed at CSI.NodeGetInfo: rpc error: code = Unavailable desc = driver not ready yet',
    );
    assert.deepEqual(handler.drivers(), []);
    assert.deepEqual(services.facts, [], 'no facts for a failed registration');
    // The retry (the plugin manager's backoff) finds no leftover entry with the same version.
    delete driver.behaviour.failNodeGetInfo;
    await handler.validatePlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock'));
    await handler.registerPlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock'));
    assert.equal(handler.drivers().length, 1);
  });

  it('refuses an empty node id with the kubelet text', async (t) => {
    const { driver } = await withDriver(t);
    driver.behaviour = { ...driver.behaviour, nodeId: '' };
    const handler = createCsiHandler(recordingServices());
    await assert.rejects(
      handler.registerPlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock')),
      /^BerthError: error adding CSI driver node info: driverNodeID must not be empty$/,
    );
    assert.deepEqual(handler.drivers(), []);
  });

  it('keeps going when an optional call fails, saying so', async (t) => {
    const { driver } = await withDriver(t);
    driver.behaviour = { ...driver.behaviour, failGetPluginInfo: true };
    const handler = createCsiHandler(recordingServices());
    await handler.registerPlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock'));
    const [view] = handler.drivers();
    assert.equal(view?.vendorVersion, null);
    assert.deepEqual(view?.warnings, [
      'GetPluginInfo: rpc error: code = Unimplemented desc = GetPluginInfo is not implemented',
    ]);
  });

  it('fails fast on an endpoint with no driver, and within the deadline on one that never answers', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const handler = createCsiHandler(recordingServices({ options: { callTimeoutMs: 300 } }));
    await assert.rejects(
      handler.registerPlugin('gone', dir.join('missing.sock'), ['1.0.0'], ctx('/r/g.sock')),
      /failed at CSI.NodeGetInfo: rpc error: code = (Unavailable|DeadlineExceeded)/,
    );
    // A listener that accepts but never speaks HTTP/2: every call runs into the deadline.
    const { createServer } = await import('node:net');
    const open = new Set<import('node:net').Socket>();
    const silent = createServer((socket) => open.add(socket));
    await new Promise<void>((resolve) => silent.listen(dir.join('silent.sock'), resolve));
    t.after(() => {
      for (const socket of open) socket.destroy();
      silent.close();
    });
    await assert.rejects(
      handler.registerPlugin('silent', dir.join('silent.sock'), ['1.0.0'], ctx('/r/s.sock')),
      /failed at CSI.NodeGetInfo: rpc error: code = DeadlineExceeded/,
    );
  });
});

describe('CSI handler: bounds on the topology (issue 17)', () => {
  it('a 3.9 MB topology is refused naming the budget, and nothing is recorded', async (t) => {
    const { driver } = await withDriver(t);
    const topology: Record<string, string> = {};
    // 27,600 segments of about 140 bytes: 3.9 MB on the wire.
    for (let i = 0; i < 27_600; i++)
      topology[`topology.example.com/k${i}-${'x'.repeat(50)}`] = `v${i}-${'y'.repeat(50)}`;
    driver.behaviour = { ...driver.behaviour, topology };
    const services = recordingServices();
    const handler = createCsiHandler(services);
    await assert.rejects(
      handler.registerPlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock')),
      (err: unknown) =>
        isBerthError(err, 'BERTH_REGISTER_FAILED') &&
        /failed at CSI\.NodeGetInfo: the reply is 3\d{6} bytes, more than the budget of 65536 bytes berth records per plugin/.test(
          err.message,
        ),
    );
    assert.deepEqual(handler.drivers(), []);
    assert.deepEqual(services.facts, []);
  });

  const bad: Array<[string, Record<string, string>, RegExp]> = [
    [
      '65 segments',
      Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`example.com/k${i}`, 'v'])),
      /accessible_topology has 65 segments, more than the limit of 64/,
    ],
    [
      'a 64-character key name',
      { [`example.com/${'k'.repeat(64)}`]: 'v' },
      /the name must be 1-63 characters/,
    ],
    ['a prefix that is no DNS subdomain', { 'Example_Com/zone': 'v' }, /the prefix must be a DNS subdomain/],
    ['a 64-character value', { 'example.com/zone': 'z'.repeat(64) }, /a value must be at most 63 characters/],
    ['a value with a space', { 'example.com/zone': 'z 1' }, /a value must be at most 63 characters/],
  ];
  for (const [what, topology, text] of bad) {
    it(`refuses ${what} as Kubernetes refuses such a label`, async (t) => {
      const { driver } = await withDriver(t);
      driver.behaviour = { ...driver.behaviour, topology };
      const services = recordingServices();
      const handler = createCsiHandler(services);
      await assert.rejects(
        handler.registerPlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock')),
        (err: unknown) => isBerthError(err, 'BERTH_REGISTER_FAILED') && text.test(err.message),
      );
      assert.deepEqual(handler.drivers(), []);
      assert.deepEqual(services.facts, []);
    });
  }

  it('accepts 64 segments at the key and value limits', async (t) => {
    const { driver } = await withDriver(t);
    const topology = Object.fromEntries(
      Array.from({ length: 64 }, (_, i) => [
        `${'p'.repeat(240)}.example.com/${String(i).padEnd(63, 'k')}`,
        'v'.repeat(63),
      ]),
    );
    driver.behaviour = { ...driver.behaviour, topology };
    const handler = createCsiHandler(recordingServices());
    await handler.registerPlugin('test.plugin', driver.socketPath, ['1.0.0'], ctx('/r/a.sock'));
    assert.equal(handler.drivers()[0]?.topologyKeys.length, 64);
  });
});

describe('CSI handler: no listener per call on a long-lived signal (issue 17)', () => {
  it('40 registrations hanging in NodeGetInfo raise no MaxListenersExceededWarning, and stop ends them all', async (t) => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    t.after(() => process.off('warning', onWarning));
    const { driver } = await withDriver(t);
    driver.behaviour = { ...driver.behaviour, hangNodeGetInfo: true };
    const handler = createCsiHandler(recordingServices());
    await handler.start();
    const hanging = Array.from({ length: 40 }, (_, i) =>
      handler.registerPlugin(`driver-${i}`, driver.socketPath, ['1.0.0'], ctx(`/r/${i}.sock`)).then(
        () => assert.fail('NodeGetInfo never answered'),
        (err: unknown) => err,
      ),
    );
    await waitFor(
      'every registration to be in NodeGetInfo',
      () => driver.calls.filter((c) => c === 'NodeGetInfo').length === 40,
    );
    await handler.stop();
    for (const err of await Promise.all(hanging)) assert.ok(err instanceof Error);
    // A warning is emitted on the next tick; one turn of the loop lets it arrive.
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(
      warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
      [],
    );
  });
});
