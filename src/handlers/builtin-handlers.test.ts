import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordingServices } from '../testing/harness/index.js';
import { buildBuiltinHandlers } from './build-builtin-handlers.js';
import { BUILTIN_HANDLER_TYPES, builtinHandlers, isBuiltinHandlerType } from './builtin-handlers.js';

test('the table lists the kubelet types and csi-controller, each keyed by the PluginInfo.type it builds a handler for', async () => {
  assert.deepEqual(BUILTIN_HANDLER_TYPES, ['CSIPlugin', 'csi-controller', 'DevicePlugin', 'DRAPlugin']);
  for (const type of BUILTIN_HANDLER_TYPES) {
    const entry = builtinHandlers[type];
    assert.equal(entry.type, type);
    assert.ok(entry.summary.length > 0);
    const handler = (await entry.load())(recordingServices());
    assert.equal(handler.type, type);
    await handler.stop?.();
  }
  assert.equal(isBuiltinHandlerType('CSIPlugin'), true);
  assert.equal(isBuiltinHandlerType('toString'), false, 'only own keys');
});

test('buildBuiltinHandlers gives each handler its own services and delegate', async () => {
  const asked: string[] = [];
  const built = await buildBuiltinHandlers(
    (type) => {
      asked.push(type);
      return recordingServices({ options: type === 'DRAPlugin' ? { wipeDelayMs: 5 } : {} });
    },
    () => undefined,
  );
  assert.deepEqual(asked, ['CSIPlugin', 'csi-controller', 'DevicePlugin', 'DRAPlugin']);
  assert.equal(built.DRAPlugin.options.wipeDelayMs, 5, 'the DRA handler read its own options');
  assert.deepEqual(built.CSIPlugin.drivers(), []);
  assert.deepEqual(built['csi-controller'].controllers(), []);
  await Promise.all(Object.values(built).map((h) => h.stop?.()));
});
