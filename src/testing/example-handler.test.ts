import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBerthError } from '../common/index.js';
import type { PluginCallContext } from '../handlers/index.js';
import { createExamplePlugin } from '../registration/index.js';
import { createExampleHandler } from './example-handler.js';
import { createTempDir } from './temp-dir.js';
import { newTestExamplePlugin } from './test-example-plugin.js';

const versions = ['v1beta1', 'v1beta2'];
const context: PluginCallContext = { type: 'T', socketPath: '/tmp/p.sock', foundInDeprecatedDir: false };

test('validate accepts exactly the supported versions with an endpoint and records events', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const plugin = newTestExamplePlugin('example-plugin', 'T', dir.join('p.sock'), ...versions);
  t.after(() => plugin.stop());
  await plugin.start();

  const handler = createExampleHandler({ supportedVersions: versions });
  handler.validatePlugin('example-plugin', plugin.endpoint, versions, context);
  await handler.registerPlugin('example-plugin', plugin.endpoint, versions, context);
  handler.deRegisterPlugin('example-plugin', plugin.endpoint, context);
  assert.deepEqual(handler.events, [
    'validate example-plugin',
    'register example-plugin',
    'deregister example-plugin',
  ]);
  handler.resetEvents();
  assert.deepEqual(handler.events, []);
});

test('validate refuses other versions, an empty endpoint, and the deprecated dir unless permitted', () => {
  const handler = createExampleHandler({ supportedVersions: versions });
  assert.throws(
    () => handler.validatePlugin('p', '/e', ['v1beta1'], context),
    (err: unknown) => {
      assert.ok(isBerthError(err, 'BERTH_VALIDATION_FAILED'));
      assert.equal(err.message, "versions('[v1beta1]') != supported versions('[v1beta1 v1beta2]')");
      return true;
    },
  );
  assert.throws(
    () => handler.validatePlugin('p', '/e', ['v1beta2', 'v1beta1'], context),
    /!= supported versions/,
    'order matters (deep equality)',
  );
  assert.throws(() => handler.validatePlugin('p', '', versions, context), {
    message: 'expecting non empty endpoint',
  });
  const deprecated = { ...context, foundInDeprecatedDir: true };
  assert.throws(() => handler.validatePlugin('p', '/e', versions, deprecated), /deprecated plugin directory/);
  const permissive = createExampleHandler({ supportedVersions: versions, permitDeprecatedDir: true });
  permissive.validatePlugin('p', '/e', versions, deprecated);
  assert.deepEqual(handler.events.length, 4);
});

test('register fails when the plugin does not serve both example versions', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const plugin = createExamplePlugin({
    socketPath: dir.join('p.sock'),
    name: 'half',
    type: 'T',
    versions,
    services: ['v1beta1'],
  });
  t.after(() => plugin.stop());
  await plugin.start();
  const handler = createExampleHandler({ supportedVersions: versions });
  await assert.rejects(
    handler.registerPlugin('half', plugin.socketPath, versions, context),
    (err: unknown) => {
      assert.ok(isBerthError(err, 'BERTH_PLUGIN_CALL_FAILED'), String(err));
      assert.match(err.message, /v1beta2/);
      return true;
    },
  );
  assert.deepEqual(handler.events, ['register half']);
});

test('register fails when nothing serves the endpoint', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const handler = createExampleHandler({ supportedVersions: versions });
  await assert.rejects(
    handler.registerPlugin('gone', dir.join('gone.sock'), versions, context),
    (err: unknown) => isBerthError(err, 'BERTH_PLUGIN_CALL_FAILED'),
  );
});
