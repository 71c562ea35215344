/**
 * A full data disk, on a real 2 MiB tmpfs (mounted when the test runs as
 * root, as CI does; skipped otherwise): registrations are refused with the
 * storage error and berth is not ready while it is full, and once space
 * returns the refused registrations land by themselves within 5 s. A daemon
 * started on a full disk comes up degraded: it lists what it had, answers
 * /readyz 503 naming the full disk, refuses writes, and recovers when freed.
 */
import assert from 'node:assert/strict';
import { statSync, unlinkSync } from 'node:fs';
import { request } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { silentLogger } from '../common/index.js';
import { createExamplePlugin, type ExamplePlugin } from '../registration/index.js';
import { canMountTmpfs, fillDisk, mountTmpfs, unmountTmpfs } from '../testing/harness/index.js';
import { createTempDir, waitFor } from '../testing/index.js';
import { resolveDaemonConfig } from './config/config.js';
import { createDaemon, type Daemon } from './daemon.js';

const TYPE = 'example.com/gpu';

function get(socketPath: string, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A data directory on its own 2 MiB tmpfs, unmounted after the test. */
function smallDisk(t: TestContext) {
  const dir = createTempDir();
  assert.ok(mountTmpfs(dir.path, '2m'), 'mount a 2 MiB tmpfs');
  t.after(() => {
    unmountTmpfs(dir.path);
    dir.remove();
  });
  const config = resolveDaemonConfig(
    { handlers: [{ type: TYPE, versions: ['v1'] }] },
    { dataDir: dir.path },
    { env: {} },
  );
  return { dir, config };
}

async function startPlugins(t: TestContext, pluginsDir: string, names: string[]): Promise<ExamplePlugin[]> {
  const plugins = names.map((name) =>
    createExamplePlugin({ socketPath: `${pluginsDir}/${name}.sock`, name, type: TYPE, versions: ['v1'] }),
  );
  for (const plugin of plugins) {
    t.after(() => plugin.stop());
    await plugin.start();
  }
  return plugins;
}

const listed = (daemon: Daemon) => (daemon.registry.listPlugins(TYPE) ?? []).map((p) => p.name).sort();

async function readyz(socketPath: string): Promise<{ status: number; text: string }> {
  return get(socketPath, '/readyz?verbose');
}

const mountable = canMountTmpfs();

describe('a full data disk (a real 2 MiB tmpfs)', {
  skip: !mountable && 'needs root to mount a tmpfs',
}, () => {
  it('fill → refuse → free → recover: refused registrations land within 5 s of freeing, by themselves', async (t) => {
    const { dir, config } = smallDisk(t);
    const daemon = createDaemon(config, { logger: silentLogger });
    t.after(() => daemon.stop());
    await daemon.start();
    const before = await startPlugins(t, config.pluginsDir, ['a-0', 'a-1', 'a-2']);
    for (const plugin of before)
      assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });

    const filler = dir.join('filler');
    fillDisk(filler);
    const names = Array.from({ length: 10 }, (_, i) => `b-${i}`);
    const during = await startPlugins(t, config.pluginsDir, names);
    for (const plugin of during) {
      const status = await plugin.nextStatus();
      assert.equal(status.pluginRegistered, false);
      assert.match(status.error, /full/i, 'the plugin hears that the disk is full');
    }
    assert.deepEqual(listed(daemon), ['a-0', 'a-1', 'a-2'], 'nothing unpersisted is listed');
    const notReady = await readyz(config.apiSocketPath);
    assert.equal(notReady.status, 503);
    assert.match(notReady.text, /\[-\]storage failed: .*full/);
    const status = JSON.parse((await get(config.apiSocketPath, '/v1/status')).text);
    assert.equal(status.ready, false, '/v1/status agrees with /readyz');
    assert.equal(status.storage.health.state, 'failing');
    // berth's own write-ahead log stays bounded (it did not fill the disk).
    const wal = statSync(`${config.statePath}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    assert.ok(wal <= 600 * 1024, `the WAL is ${wal} bytes`);

    const freedAt = Date.now();
    unlinkSync(filler);
    await waitFor('the refused registrations land', () => listed(daemon).length === 13, { timeoutMs: 5000 });
    const recoveredMs = Date.now() - freedAt;
    t.diagnostic(`all 10 refused registrations landed ${recoveredMs} ms after the disk was freed`);
    assert.ok(recoveredMs < 5000);
    // Each plugin hears Notify(true) right after its row is durable.
    await waitFor('every plugin told it is registered', () =>
      during.every((plugin) => plugin.statuses.at(-1)?.pluginRegistered === true),
    );
    await waitFor('ready again', async () => (await readyz(config.apiSocketPath)).status === 200, {
      timeoutMs: 5000,
    });
    assert.equal(JSON.parse((await get(config.apiSocketPath, '/v1/status')).text).ready, true);
  });

  it('starts on a full disk degraded: lists what it has, 503, refuses writes, then recovers when freed', async (t) => {
    const { dir, config } = smallDisk(t);
    const first = createDaemon(config, { logger: silentLogger });
    t.after(() => first.stop());
    await first.start();
    const kept = await startPlugins(t, config.pluginsDir, ['a-0', 'a-1', 'a-2']);
    for (const plugin of kept)
      assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    await first.stop();

    const filler = dir.join('filler');
    fillDisk(filler);
    const second = createDaemon(config, { logger: silentLogger });
    t.after(() => second.stop());
    await second.start();
    assert.equal(second.state, 'running');
    assert.equal(second.ready, true);
    assert.deepEqual(listed(second), ['a-0', 'a-1', 'a-2'], 'it lists what it had');
    const plugins = JSON.parse((await get(config.apiSocketPath, '/v1/plugins')).text);
    assert.equal(plugins.plugins.length, 3);
    const notReady = await get(config.apiSocketPath, '/readyz');
    assert.equal(notReady.status, 503);
    const body = JSON.parse(notReady.text);
    assert.equal(body.error.code, 'BERTH_NOT_READY');
    assert.match(body.error.message, /storage: .*disk is full/);
    assert.doesNotMatch(body.error.message, /aside/, 'never advises moving the database aside');
    assert.equal(JSON.parse((await get(config.apiSocketPath, '/v1/status')).text).ready, false);
    assert.equal((await get(config.apiSocketPath, '/livez')).status, 200, 'alive all the same');

    const [late] = await startPlugins(t, config.pluginsDir, ['late']);
    const refused = await late?.nextStatus();
    assert.equal(refused?.pluginRegistered, false, 'a write is refused');
    assert.match(refused?.error ?? '', /BERTH_STORAGE_FAILED|full/);

    const freedAt = Date.now();
    unlinkSync(filler);
    await waitFor('the refused registration lands', () => listed(second).includes('late'), {
      timeoutMs: 5000,
    });
    t.diagnostic(`registered ${Date.now() - freedAt} ms after the disk was freed`);
    await waitFor('ready', async () => (await get(config.apiSocketPath, '/readyz')).status === 200, {
      timeoutMs: 5000,
    });
    await second.stop();

    // What it wrote after recovering is durable.
    const third = createDaemon(config, { logger: silentLogger });
    t.after(() => third.stop());
    await third.start();
    assert.deepEqual(listed(third), ['a-0', 'a-1', 'a-2', 'late']);
  });
});
