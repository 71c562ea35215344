import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { isExtendedResourceName } from './resource-name.js';
import type { PluginCallContext, PluginHandler } from './types.js';
import {
  builtinHandlerTypes,
  createCsiHandler,
  createDevicePluginHandler,
  createDraHandler,
  createVersionedHandler,
} from './version-handlers.js';

const context: PluginCallContext = { type: 'X', socketPath: '/r/p.sock', foundInDeprecatedDir: false };

async function validationError(handler: PluginHandler, name: string, endpoint: string, versions: string[]) {
  try {
    await handler.validatePlugin(name, endpoint, versions, context);
  } catch (err) {
    assert.ok(isBerthError(err, 'BERTH_VALIDATION_FAILED'), String(err));
    return err.message;
  }
  return undefined;
}

function recordingDelegate() {
  const calls: string[] = [];
  const delegate: PluginHandler = {
    validatePlugin: (name, endpoint, versions) => {
      calls.push(`validate ${name} ${endpoint} ${versions.join(',')}`);
    },
    registerPlugin: (name, endpoint) => {
      calls.push(`register ${name} ${endpoint}`);
    },
    deRegisterPlugin: (name, endpoint) => {
      calls.push(`deregister ${name} ${endpoint}`);
    },
  };
  return { delegate, calls };
}

test('type constants match the kubelet names', () => {
  assert.deepEqual(builtinHandlerTypes, {
    CSIPlugin: 'CSIPlugin',
    DevicePlugin: 'DevicePlugin',
    DRAPlugin: 'DRAPlugin',
  });
  assert.equal(createCsiHandler().type, 'CSIPlugin');
  assert.equal(createDevicePluginHandler().type, 'DevicePlugin');
  assert.equal(createDraHandler().type, 'DRAPlugin');
});

test('CSI handler accepts 1.x versions and refuses others with the kubelet text', async () => {
  const csi = createCsiHandler();
  assert.equal(await validationError(csi, 'csi.example.com', '/csi.sock', ['1.0.0']), undefined);
  assert.equal(await validationError(csi, 'csi.example.com', '/csi.sock', ['v1.2.0', '2.0.0']), undefined);
  assert.equal(
    await validationError(csi, 'd', '/e', ['0.3.0']),
    'validation failed for CSI Driver d at endpoint /e: kubernetes.io/csi: ValidatePlugin for CSI driver "d" failed. None of the versions specified ["0.3.0"] are supported. err=highest supported version reported is 0.3.0, must be v1.x',
  );
  assert.equal(
    await validationError(csi, 'd', '/e', ['2.0.0', 'v1beta1']),
    'validation failed for CSI Driver d at endpoint /e: kubernetes.io/csi: ValidatePlugin for CSI driver "d" failed. None of the versions specified ["2.0.0" "v1beta1"] are supported. err=could not find a highest supported version from versions ([2.0.0 v1beta1]) reported: illegal version string "v1beta1"',
  );
  assert.equal(
    await validationError(csi, 'd', '/e', []),
    'validation failed for CSI Driver d at endpoint /e: kubernetes.io/csi: ValidatePlugin for CSI driver "d" failed. Plugin returned an empty list for supported versions',
  );
});

test('device plugin handler requires v1beta1 and an extended resource name', async () => {
  const dp = createDevicePluginHandler();
  assert.equal(await validationError(dp, 'example.com/gpu', '/e', ['v1beta1']), undefined);
  assert.equal(
    await validationError(dp, 'example.com/gpu', '/e', ['v1alpha', 'v2']),
    'manager version, v1beta1, is not among plugin supported versions [v1alpha v2]',
  );
  assert.equal(
    await validationError(dp, 'gpu', '/e', ['v1beta1']),
    'invalid name of device plugin socket: the ResourceName "gpu" is invalid',
  );
  const lax = createDevicePluginHandler({ requireExtendedResourceName: false });
  assert.equal(await validationError(lax, 'example-plugin-0', '/e', ['v1beta1', 'v1beta2']), undefined);
});

test('extended resource names follow the kubelet rules', () => {
  assert.equal(isExtendedResourceName('example.com/gpu'), true);
  assert.equal(isExtendedResourceName('nvidia.com/gpu-1.a_b'), true);
  assert.equal(isExtendedResourceName('gpu'), false, 'unprefixed names are native');
  assert.equal(isExtendedResourceName('kubernetes.io/gpu'), false);
  assert.equal(isExtendedResourceName('foo.kubernetes.io/gpu'), false);
  assert.equal(isExtendedResourceName('requests.example.com/gpu'), false);
  assert.equal(isExtendedResourceName('Example.com/gpu'), false, 'the domain must be lower case');
  assert.equal(isExtendedResourceName('example.com/-gpu'), false);
  assert.equal(isExtendedResourceName(`example.com/${'g'.repeat(64)}`), false);
  assert.equal(isExtendedResourceName('a/b/c'), false);
});

test('DRA handler accepts the DRAPlugin services the kubelet uses', async () => {
  const dra = createDraHandler();
  assert.equal(await validationError(dra, 'dra.example.com', '/dra.sock', ['v1.DRAPlugin']), undefined);
  assert.equal(
    await validationError(dra, 'dra.example.com', '/dra.sock', ['x', 'v1beta1.DRAPlugin']),
    undefined,
  );
  assert.equal(
    await validationError(dra, 'd', '/e', ['v1alpha4.Node', '1.0.0']),
    'invalid supported gRPC versions of DRA driver plugin d at endpoint /e: none of services supported by the plugin (["v1alpha4.Node" "1.0.0"]) are supported by the kubelet (["v1.DRAPlugin" "v1beta1.DRAPlugin"])',
  );
  assert.equal(
    await validationError(dra, 'd', '/e', []),
    'invalid supported gRPC versions of DRA driver plugin d at endpoint /e: empty list of supported gRPC services (aka supported versions)',
  );
});

test('versioned handler accepts any listed version and names both sides when refusing', async () => {
  const h = createVersionedHandler({ type: 'Metrics', versions: ['v1', 'v2'] });
  assert.equal(h.type, 'Metrics');
  assert.equal(await validationError(h, 'm', '/e', ['v0', 'v2']), undefined);
  assert.equal(
    await validationError(h, 'm', '/e', ['v3']),
    'plugin m of type Metrics supports versions [v3], none of which is accepted (accepted versions: [v1 v2])',
  );
  assert.throws(
    () => createVersionedHandler({ type: 'Metrics', versions: [] }),
    (err: unknown) => isBerthError(err, 'BERTH_INVALID_ARGUMENT'),
  );
  assert.throws(
    () => createVersionedHandler({ type: '', versions: ['v1'] }),
    /type must be a non-empty string/,
  );
});

test('built-in handlers pass validate (only when accepted), register and deregister to the delegate', async () => {
  const { delegate, calls } = recordingDelegate();
  const h = createDraHandler({ delegate });
  await assert.rejects(Promise.resolve(h.validatePlugin('d', '/e', ['nope'], context)));
  assert.deepEqual(calls, [], 'a refused plugin never reaches the delegate');
  await h.validatePlugin('d', '/e', ['v1.DRAPlugin'], context);
  await h.registerPlugin('d', '/e', ['v1.DRAPlugin'], context);
  await h.deRegisterPlugin('d', '/e', context);
  assert.deepEqual(calls, ['validate d /e v1.DRAPlugin', 'register d /e', 'deregister d /e']);
});

test('a delegate failure fails the call', async () => {
  const h = createVersionedHandler({
    type: 'T',
    versions: ['v1'],
    delegate: {
      validatePlugin() {},
      registerPlugin() {
        throw new Error('registry unavailable');
      },
      deRegisterPlugin() {},
    },
  });
  await assert.rejects(Promise.resolve(h.registerPlugin('p', '/e', ['v1'], context)), /registry unavailable/);
  // Without a delegate, register and deregister are accepted no-ops.
  const bare = createCsiHandler();
  await bare.registerPlugin('p', '/e', ['1.0.0'], context);
  await bare.deRegisterPlugin('p', '/e', context);
});
