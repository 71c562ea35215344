import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BerthError } from '../common/index.js';
import type { PluginHandler } from '../handlers/types.js';
import { createActualStateOfWorld } from './actual-state.js';
import type { PluginInfo } from './types.js';

const handler: PluginHandler = {
  validatePlugin() {},
  registerPlugin() {},
  deRegisterPlugin() {},
};

function plugin(overrides: Partial<PluginInfo> = {}): PluginInfo {
  return {
    socketPath: '/plugins/test.sock',
    timestamp: Date.UTC(2026, 0, 1),
    uuid: '8c1f3f4e-0000-4000-8000-000000000001',
    foundInDeprecatedDir: false,
    handler,
    name: 'test',
    ...overrides,
  };
}

describe('actual state of world', () => {
  it('adds a valid plugin and finds it by timestamp and by uuid (ASW 1)', () => {
    const asw = createActualStateOfWorld();
    const info = plugin({ type: 'DevicePlugin', endpoint: '/e.sock', supportedVersions: ['v1beta1'] });
    asw.addPlugin(info);
    assert.deepEqual(asw.getRegisteredPlugins(), [info]);
    assert.equal(asw.getRegisteredPlugins()[0]?.handler, handler, 'the handler is kept by reference');
    assert.ok(asw.pluginExists(info.socketPath));
    assert.ok(asw.pluginExistsWithCorrectTimestamp(info));
    assert.ok(asw.pluginExistsWithCorrectUUID(info));
    assert.deepEqual(asw.get(info.socketPath), info);
  });

  it('rejects an empty socket path with the upstream text (ASW 2)', () => {
    const asw = createActualStateOfWorld();
    const info = plugin({ socketPath: '' });
    assert.throws(
      () => asw.addPlugin(info),
      (err: unknown) =>
        err instanceof BerthError &&
        err.code === 'BERTH_SOCKET_PATH_EMPTY' &&
        err.message === 'socket path is empty',
    );
    assert.deepEqual(asw.getRegisteredPlugins(), []);
    assert.ok(!asw.pluginExistsWithCorrectTimestamp(info));
    assert.ok(!asw.pluginExistsWithCorrectUUID(info));
    assert.ok(!asw.pluginExists(''));
  });

  it('add then remove leaves nothing; removing an absent path is a no-op (ASW 3)', () => {
    const asw = createActualStateOfWorld();
    const info = plugin();
    asw.addPlugin(info);
    asw.removePlugin(info.socketPath);
    asw.removePlugin(info.socketPath);
    asw.removePlugin('/plugins/never.sock');
    assert.deepEqual(asw.getRegisteredPlugins(), []);
    assert.ok(!asw.pluginExists(info.socketPath));
    assert.ok(!asw.pluginExistsWithCorrectTimestamp(info));
    assert.ok(!asw.pluginExistsWithCorrectUUID(info));
    assert.equal(asw.get(info.socketPath), undefined);
  });

  it('a newer generation of the same path is not "existing with the correct" marker (ASW 4)', () => {
    const asw = createActualStateOfWorld();
    const registered = plugin();
    asw.addPlugin(registered);
    const newerTimestamp = plugin({ timestamp: registered.timestamp + 1 });
    const newerUuid = plugin({ uuid: '8c1f3f4e-0000-4000-8000-000000000002' });
    assert.ok(!asw.pluginExistsWithCorrectTimestamp(newerTimestamp));
    assert.ok(asw.pluginExistsWithCorrectUUID(newerTimestamp), 'same uuid, other timestamp');
    assert.ok(!asw.pluginExistsWithCorrectUUID(newerUuid));
    assert.ok(asw.pluginExistsWithCorrectTimestamp(newerUuid), 'same timestamp, other uuid');
    assert.ok(asw.pluginExists(registered.socketPath));
  });

  it('overwrites an existing entry for the same path', () => {
    const asw = createActualStateOfWorld();
    asw.addPlugin(plugin({ name: 'old' }));
    const replacement = plugin({ name: 'new', uuid: '8c1f3f4e-0000-4000-8000-000000000003' });
    asw.addPlugin(replacement);
    assert.equal(asw.getRegisteredPlugins().length, 1);
    assert.equal(asw.get(replacement.socketPath)?.name, 'new');
    assert.ok(asw.pluginExistsWithCorrectUUID(replacement));
  });

  it('stores and hands out copies', () => {
    const asw = createActualStateOfWorld();
    const info = plugin({ supportedVersions: ['v1'] });
    asw.addPlugin(info);
    info.name = 'edited after add';
    info.supportedVersions?.push('v2');
    const [listed] = asw.getRegisteredPlugins();
    assert.ok(listed);
    listed.supportedVersions?.push('v3');
    assert.equal(asw.get(info.socketPath)?.name, 'test');
    assert.deepEqual(asw.get(info.socketPath)?.supportedVersions, ['v1']);
  });
});
