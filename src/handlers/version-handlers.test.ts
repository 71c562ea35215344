import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { isExtendedResourceName } from './resource-name.js';
import type { PluginCallContext, PluginHandler } from './types.js';
import { createDevicePluginHandler, createVersionedHandler, DevicePlugin } from './version-handlers.js';

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
  const h = createDevicePluginHandler({ delegate });
  assert.equal(h.type, DevicePlugin);
  await assert.rejects(Promise.resolve(h.validatePlugin('x.com/d', '/e', ['nope'], context)));
  assert.deepEqual(calls, [], 'a refused plugin never reaches the delegate');
  await h.validatePlugin('x.com/d', '/e', ['v1beta1'], context);
  await h.registerPlugin('x.com/d', '/e', ['v1beta1'], context);
  await h.deRegisterPlugin('x.com/d', '/e', context);
  assert.deepEqual(calls, ['validate x.com/d /e v1beta1', 'register x.com/d /e', 'deregister x.com/d /e']);
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
  const bare = createDevicePluginHandler();
  await bare.registerPlugin('p', '/e', ['v1beta1'], context);
  await bare.deRegisterPlugin('p', '/e', context);
});
