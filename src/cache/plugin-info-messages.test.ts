import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BerthError } from '../common/index.js';
import {
  generateError,
  generateErrorDetailed,
  generateMsg,
  generateMsgDetailed,
} from './plugin-info-messages.js';
import type { PluginInfo } from './types.js';

const info: PluginInfo = {
  socketPath: '/plugins/dev.sock',
  timestamp: Date.UTC(2026, 0, 2, 3, 4, 5),
  uuid: '0f8e1a52-1111-4222-8333-444455556666',
  foundInDeprecatedDir: false,
  type: 'DevicePlugin',
  name: 'example.com/dev',
  endpoint: '/plugins/dev-service.sock',
  supportedVersions: ['v1beta1', 'v1beta2'],
};

const detail =
  '(plugin details: type="DevicePlugin" name="example.com/dev" endpoint="/plugins/dev-service.sock" ' +
  'versions=[v1beta1,v1beta2] uuid=0f8e1a52-1111-4222-8333-444455556666 timestamp=2026-01-02T03:04:05.000Z)';

describe('PluginInfo messages', () => {
  it('builds "<prefix> <plugin> <suffix>" in a simple and a detailed form', () => {
    const [simple, detailed] = generateMsg(info, 'RegisterPlugin started', 'with 2 handlers');
    assert.equal(simple, 'RegisterPlugin started for plugin at "/plugins/dev.sock" with 2 handlers');
    assert.equal(
      detailed,
      `RegisterPlugin started for plugin at "/plugins/dev.sock" ${detail} with 2 handlers`,
    );
    assert.equal(generateMsgDetailed(info, 'RegisterPlugin started', 'with 2 handlers'), detailed);
  });

  it('leaves out empty parts and what registration has not learned yet', () => {
    const bare: PluginInfo = { socketPath: '/p.sock', timestamp: 0, uuid: 'u-1', foundInDeprecatedDir: true };
    assert.deepEqual(generateMsg(bare, 'seen', ''), [
      'seen for plugin at "/p.sock"',
      'seen for plugin at "/p.sock" (plugin details: uuid=u-1 timestamp=1970-01-01T00:00:00.000Z foundInDeprecatedDir=true)',
    ]);
  });

  it('appends the cause as ": <err>" and keeps it as the cause', () => {
    const cause = new Error('connection refused');
    const [simple, detailed] = generateError(info, 'RegisterPlugin error', cause);
    assert.equal(
      simple.message,
      'RegisterPlugin error for plugin at "/plugins/dev.sock": connection refused',
    );
    assert.equal(
      detailed.message,
      `RegisterPlugin error for plugin at "/plugins/dev.sock" ${detail}: connection refused`,
    );
    assert.equal(simple.cause, cause);
    assert.equal(generateErrorDetailed(info, 'RegisterPlugin error', cause).message, detailed.message);
  });

  it('keeps the code of a BerthError cause, and has no suffix without a cause', () => {
    const cause = new BerthError('BERTH_DIAL_FAILED', 'dial failed', { details: { socketPath: '/x' } });
    const err = generateErrorDetailed(info, 'RegisterPlugin error', cause);
    assert.ok(err instanceof BerthError);
    assert.equal(err.code, 'BERTH_DIAL_FAILED');
    assert.deepEqual(err.details, { socketPath: '/x' });
    const [simple] = generateError(info, 'UnregisterPlugin error', undefined);
    assert.equal(simple.message, 'UnregisterPlugin error for plugin at "/plugins/dev.sock"');
    assert.ok(!(simple instanceof BerthError));
    assert.equal(generateErrorDetailed(info, 'x', 'plain string').message.endsWith(': plain string'), true);
  });
});
