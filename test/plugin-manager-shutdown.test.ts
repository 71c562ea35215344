/**
 * berth's own stop is not a plugin failure: an attempt cut short by stop()
 * must not run the #133725 roll-back (which deregisters the plugin from its
 * handler, and through the registry bridge would delete it from persisted
 * state). Real socket, real gRPC plugin.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PluginHandler } from '../src/handlers/index.js';
import { createPluginManager } from '../src/plugin-manager/index.js';
import { createExamplePlugin } from '../src/registration/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

test('stopping the manager while a plugin is being registered does not deregister it', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const calls: string[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const handler: PluginHandler = {
    validatePlugin: () => {
      calls.push('validate');
    },
    registerPlugin: async () => {
      calls.push('register');
      await gate; // still registering when stop() comes
    },
    deRegisterPlugin: () => {
      calls.push('deregister');
    },
  };
  const manager = createPluginManager({ pluginsDir: dir.join('plugins'), liveness: false });
  manager.addHandler('example.com/slow', handler);
  await manager.start();
  const plugin = createExamplePlugin({
    socketPath: dir.join('plugins', 'slow.sock'),
    name: 'slow',
    type: 'example.com/slow',
    versions: ['v1'],
  });
  t.after(() => plugin.stop());
  await plugin.start();
  await waitFor('the handler to be registering the plugin', () => calls.includes('register'));

  const stopped = manager.stop();
  release();
  await stopped;
  assert.deepEqual(calls, ['validate', 'register'], 'no deregister: the plugin did not go anywhere');
});
