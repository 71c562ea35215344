/**
 * Storage failure is honest, on real files: a full disk (a small tmpfs,
 * mounted when the test runs as root) and a read-only database (chmod 0444,
 * in a child process without CAP_DAC_OVERRIDE, since root otherwise ignores modes).
 * In both, a change that cannot be persisted is not applied, the failure is
 * visible, and the registry recovers by itself once writes work again.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { unlinkSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { PluginEvent } from '../common/index.js';
import { createSqliteStorage, type SqliteStorage } from '../storage/index.js';
import {
  canMountTmpfs,
  fillDisk,
  instrumented,
  mountTmpfs,
  siblingModule,
  stopChild,
  unmountTmpfs,
} from '../testing/harness/index.js';
import { createTempDir, nodePlugin, waitFor } from '../testing/index.js';
import { createRegistry, type Registry } from './index.js';

const isRoot = process.getuid?.() === 0;

async function started(path: string): Promise<SqliteStorage> {
  const storage = createSqliteStorage({ path });
  await storage.start();
  return storage;
}

const names = (registry: Registry) => (registry.listPlugins('csi-node') ?? []).map((p) => p.name);

const big = (n: number) => nodePlugin(n, { name: `big-${n}`, options: { blob: 'b'.repeat(512 * 1024) } });

describe('registry storage failures on real files', () => {
  const diskFullTitle = canMountTmpfs()
    ? 'disk full (a 2 MB tmpfs): the registration is refused and not listed, a deregistration leaves no ghost, berth recovers when space returns'
    : 'disk full (injected write failure: this process may not mount a tmpfs): refused, no ghost, recovers';
  it(diskFullTitle, async (t) => {
    const dir = createTempDir();
    const mounted = mountTmpfs(dir.path, '2m');
    if (!mounted) t.diagnostic('tmpfs mount not permitted: the write failure is injected');
    t.after(() => {
      if (mounted) unmountTmpfs(dir.path);
      dir.remove();
    });
    const path = dir.join('state.db');
    const base = await started(path);
    // Without a mount the failure is injected, so the test still shows the registry's side.
    const storage = mounted ? base : instrumented(base);
    const tapped: PluginEvent[] = [];
    const registry = createRegistry({
      storage,
      onEvent: (e) => tapped.push(e),
      storageRetry: { initialMs: 50, maxMs: 400, factor: 2 },
    });
    await registry.start();
    for (let n = 0; n < 10; n++) await registry.registerPlugin(nodePlugin(n, { name: `p-${n}` }));

    const filler = dir.join('filler');
    if (mounted) fillDisk(filler);
    else (storage as ReturnType<typeof instrumented>).failWrites = 'database or disk is full (SQLITE_FULL)';

    // One batch: a large registration and a deregistration, made together.
    const [registered, deregistered] = await Promise.allSettled([
      registry.registerPlugin(big(100)),
      registry.deregisterPlugin('csi-node', 'p-3', 'alloc-3'),
    ]);
    assert.equal(registered.status, 'rejected');
    const reason = (registered as PromiseRejectedResult).reason as { code: string; message: string };
    assert.equal(reason.code, 'BERTH_STORAGE_FAILED');
    assert.match(reason.message, /full/i);
    t.diagnostic(`refused with: ${reason.message}`);
    assert.equal(deregistered.status, 'fulfilled', 'a deregistration is not refused');
    const expected = ['p-0', 'p-1', 'p-2', 'p-4', 'p-5', 'p-6', 'p-7', 'p-8', 'p-9'];
    assert.deepEqual(names(registry), expected, 'nothing unpersisted is listed, and p-3 is no ghost');
    const health = registry.storageHealth();
    assert.equal(health.state, 'failing');
    if (health.state === 'failing') {
      assert.equal(health.pendingDeletes, 1);
      assert.match(health.lastError.message, /full/i);
    }
    assert.ok(tapped.some((e) => e.type === 'storage-error'));
    assert.ok(!tapped.some((e) => e.type === 'registered' && e.plugin.name === 'big-100'));

    // Space comes back: the pending delete lands and the health is ok, with nobody's help.
    if (mounted) unlinkSync(filler);
    else (storage as ReturnType<typeof instrumented>).failWrites = undefined;
    await waitFor('storage recovered', () => registry.storageHealth().state === 'ok');
    await registry.registerPlugin(big(100));
    assert.deepEqual(names(registry), [...expected, 'big-100'].sort());
    await registry.stop();
    await storage.stop();

    const reopened = await started(path);
    try {
      const restored = createRegistry({ storage: reopened });
      assert.deepEqual(
        names(restored),
        [...expected, 'big-100'].sort(),
        'the durable state is the listed one',
      );
    } finally {
      await reopened.stop();
    }
    const db = new Database(path, { readonly: true });
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    db.close();
  });

  it('read-only database (chmod 0444, reopened): changes are refused or pending, nothing wrong is listed, berth recovers once writable', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const path = dir.join('state.db');
    // Root ignores file modes through CAP_DAC_OVERRIDE, so as root the scenario runs in a child
    // without that capability (setpriv drops it from the bounding set): still uid 0, so it reads
    // the checkout wherever it lies, but a 0444 file is read-only to it.
    const fixture = fileURLToPath(siblingModule(import.meta.url, '../../test/fixtures/registry-readonly'));
    const nodeArgs = [...(fixture.endsWith('.ts') ? ['--import', 'tsx'] : []), fixture, path];
    const child = isRoot
      ? spawn(
          'setpriv',
          ['--bounding-set=-dac_override,-dac_read_search', '--', process.execPath, ...nodeArgs],
          {
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        )
      : spawn(process.execPath, nodeArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => stopChild(child, 'SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    assert.equal(code, 0, `the scenario ran to the end: ${stderr}`);
    const report = JSON.parse(stdout) as Record<string, unknown>;
    t.diagnostic(`refused with: ${JSON.stringify(report.registerC)}`);
    assert.deepEqual(report.restored, ['a', 'b'], 'a read-only database is still read');
    const refusal = report.registerC as { code: string; message: string };
    assert.equal(refusal.code, 'BERTH_STORAGE_FAILED');
    assert.match(refusal.message, /readonly|read-only/i);
    assert.deepEqual(report.afterRefusedRegister, ['a', 'b'], 'the refused registration is not listed');
    assert.deepEqual(report.afterDeregister, ['b'], 'the deregistered plugin is no ghost');
    const health = report.healthWhileReadOnly as { state: string; pendingDeletes: number; failures: number };
    assert.equal(health.state, 'failing');
    assert.equal(health.pendingDeletes, 1);
    assert.deepEqual(report.events, ['storage-error', 'storage-error', 'deregistered']);
    assert.equal((report.healthAfterWritable as { state: string }).state, 'ok');
    assert.deepEqual(report.final, ['b', 'c']);
    assert.deepEqual(report.reopened, ['b', 'c'], 'what is durable is what was listed');
  });
});
