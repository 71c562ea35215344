/**
 * A state.db deleted while berth runs: berth notices (its periodic check, or
 * the next write), warns (log, storage-error event, /v1/status), creates the
 * file afresh and writes the registry's in-memory state back into it, so a
 * restart lists the same plugins.
 */
import assert from 'node:assert/strict';
import { existsSync, unlinkSync } from 'node:fs';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { silentLogger } from '../common/index.js';
import { createExamplePlugin } from '../registration/index.js';
import { createRecordingLogger } from '../testing/harness/index.js';
import { createTempDir, waitFor } from '../testing/index.js';
import { resolveDaemonConfig } from './config/config.js';
import { createDaemon } from './daemon.js';

const TYPE = 'example.com/gpu';

function get(socketPath: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a state database deleted while berth runs', () => {
  it('is warned about and re-created from the registry in memory', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const config = resolveDaemonConfig(
      { handlers: [{ type: TYPE, versions: ['v1'] }] },
      { dataDir: dir.path },
      { env: {} },
    );
    const logger = createRecordingLogger();
    const daemon = createDaemon(config, { logger });
    t.after(() => daemon.stop());
    await daemon.start();
    for (const name of ['p-0', 'p-1', 'p-2']) {
      const plugin = createExamplePlugin({
        socketPath: `${config.pluginsDir}/${name}.sock`,
        name,
        type: TYPE,
        versions: ['v1'],
      });
      t.after(() => plugin.stop());
      await plugin.start();
      assert.deepEqual(await plugin.nextStatus(), { pluginRegistered: true, error: '' });
    }

    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(config.statePath + suffix)) unlinkSync(config.statePath + suffix);
    }
    await waitFor('the state database is re-created', () => existsSync(config.statePath), {
      timeoutMs: 10_000,
    });
    await waitFor(
      'status reports it',
      async () => JSON.parse(await get(config.apiSocketPath, '/v1/status')).storage.recreated !== null,
    );
    const status = JSON.parse(await get(config.apiSocketPath, '/v1/status'));
    assert.match(status.storage.recreated.message, /was deleted while berth ran/);
    assert.ok(
      logger.records.some((r) => r.level === 'warn' && /was deleted while berth ran/.test(r.message)),
      'a warning is logged',
    );
    const metrics = await get(config.apiSocketPath, '/metrics');
    assert.match(metrics, /berth_registry_events_total\{type="storage-error"\} 1/, 'a storage-error event');

    // The rewrite lands in the new file: read it as another process would.
    await waitFor('the state is written back', () => {
      const db = new Database(config.statePath, { readonly: true });
      try {
        const rows = db.prepare('SELECT name FROM plugin_instances ORDER BY name').pluck().all();
        return rows.join(',') === 'p-0,p-1,p-2';
      } catch {
        return false;
      } finally {
        db.close();
      }
    });
    await daemon.stop();

    const again = createDaemon(config, { logger: silentLogger });
    t.after(() => again.stop());
    await again.start();
    assert.deepEqual(
      (again.registry.listPlugins(TYPE) ?? []).map((p) => p.name),
      ['p-0', 'p-1', 'p-2'],
      'a restart lists the same plugins',
    );
  });
});
