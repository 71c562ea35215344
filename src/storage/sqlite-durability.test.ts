import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { PluginInstanceInfo } from '../common/index.js';
import { siblingModule, spawnModule, stopChild } from '../testing/harness/index.js';
import { createTempDir, waitFor } from '../testing/index.js';
import { createSqliteStorage } from './index.js';

it('every registration acknowledged before kill -9 is on disk, in order, with group-committed waves', async (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const path = dir.join('state.db');
  const child = spawnModule(siblingModule(import.meta.url, '../../test/fixtures/registry-writer'), [path]);
  t.after(() => stopChild(child, 'SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  // Several waves of 50 concurrent registrations each, so the kill lands during a later one.
  await waitFor('220 acknowledged registrations', () => {
    if (child.exitCode !== null) throw new Error(`writer exited early (${child.exitCode}): ${stderr}`);
    return stdout.split('\n').length > 220;
  });
  child.kill('SIGKILL');
  await exited;
  assert.equal(child.signalCode, 'SIGKILL', 'killed mid-stream, not finished');

  // Only complete lines count: a number cut off by the kill was never acknowledged.
  const acked = stdout.split('\n').slice(0, -1).map(Number);
  assert.ok(acked.length >= 220);
  assert.deepEqual(
    acked,
    acked.map((_, i) => i),
    'acknowledgements come in registration order, from 0',
  );
  const lastAck = acked.length - 1;

  const storage = createSqliteStorage({ path });
  await storage.start();
  t.after(() => storage.stop());
  assert.equal(storage.corruption, undefined);
  const byName: Record<string, PluginInstanceInfo[]> =
    storage.getDynamicPluginRegistryState()?.plugins['csi-node'] ?? {};
  const stored = new Set(Object.values(byName).flatMap((list) => list.map((i) => Number(i.options.seq))));
  for (const seq of acked) assert.ok(stored.has(seq), `acknowledged registration ${seq} survived kill -9`);
  // Commits are serialised, so what landed is a prefix; at most the batches in flight go beyond the acks.
  const highest = Math.max(...stored);
  assert.equal(stored.size, highest + 1, 'no holes: everything up to the highest stored is stored');
  assert.ok(highest - lastAck <= 100, `highest stored ${highest}, last ack ${lastAck}`);
  for (let k = 0; k < 3; k++) {
    const expected: number[] = [];
    for (let seq = highest; seq >= 0; seq--) if (seq % 3 === k) expected.push(seq);
    const list = byName[`plugin-${k}`] ?? [];
    assert.deepEqual(
      list.map((i) => i.allocId),
      expected.map((seq) => `alloc-${seq}`),
      `plugin-${k}: every registration present, newest first`,
    );
    for (const info of list) {
      const seq = Number(info.options.seq);
      assert.equal(info.version, `v${seq}`);
      assert.deepEqual(info.connectionInfo, { socketPath: `/run/plugins/${seq}.sock` });
      assert.equal(typeof info.registeredAt, 'number');
    }
  }
});
