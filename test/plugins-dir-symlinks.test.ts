/**
 * The documented policy for symlinks in the plugins directory (README,
 * "Symlinks in the plugins directory"): a symlink to a socket is followed and
 * the plugin registers under the link's path; a symlinked directory is not
 * descended into, so a socket behind it is never dialled. A real daemon,
 * real plugins, real links.
 */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../src/common/index.js';
import { createDaemon, resolveDaemonConfig } from '../src/daemon/index.js';
import { createExamplePlugin } from '../src/registration/index.js';
import { createTempDir } from '../src/testing/index.js';

const TYPE = 'example.com/berth-example';

test('a symlinked socket registers under the link; a symlinked directory is not followed', async (t) => {
  await using dir = createTempDir('berth-links-');
  const outside = dir.join('outside');
  mkdirSync(join(outside, 'hidden'), { recursive: true });
  const config = resolveDaemonConfig({}, { dataDir: dir.join('data') }, { env: {} });
  const daemon = createDaemon(config, { logger: silentLogger });
  t.after(() => daemon.stop());
  await daemon.start();

  const linked = createExamplePlugin({
    socketPath: join(outside, 'real.sock'),
    name: 'linked',
    type: TYPE,
    versions: ['v1beta1'],
  });
  const hidden = createExamplePlugin({
    socketPath: join(outside, 'hidden', 'behind.sock'),
    name: 'behind-dir-link',
    type: TYPE,
    versions: ['v1beta1'],
  });
  const plain = createExamplePlugin({
    socketPath: join(config.pluginsDir, 'plain.sock'),
    name: 'plain',
    type: TYPE,
    versions: ['v1beta1'],
  });
  t.after(async () => {
    await linked.stop();
    await hidden.stop();
    await plain.stop();
  });
  await linked.start();
  await hidden.start();
  symlinkSync(join(outside, 'real.sock'), join(config.pluginsDir, 'link.sock'));
  symlinkSync(join(outside, 'hidden'), join(config.pluginsDir, 'dir-link'));
  await plain.start();

  const instance = await daemon.registry.waitForPlugin(TYPE, 'linked', {});
  assert.equal(instance.allocId, join(config.pluginsDir, 'link.sock'));
  await daemon.registry.waitForPlugin(TYPE, 'plain', {});
  // The plain socket was created after both links: once it is registered, the watcher has
  // seen the directory link too (events are handled in order).
  assert.deepEqual(daemon.registry.listInstances(TYPE, 'behind-dir-link'), []);
  assert.equal(hidden.getInfoCalls, 0, 'the socket behind a directory link was never dialled');
});
