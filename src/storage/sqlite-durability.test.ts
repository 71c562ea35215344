import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createTempDir, siblingModule, spawnModule, stopChild, waitFor } from '../testing/index.js';
import { openSqliteStorage } from './index.js';

it('every registration acknowledged before kill -9 is on disk, in order', async (t) => {
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

  await waitFor('20 acknowledged registrations', () => {
    if (child.exitCode !== null) throw new Error(`writer exited early (${child.exitCode}): ${stderr}`);
    return stdout.split('\n').length > 20;
  });
  child.kill('SIGKILL');
  await exited;
  assert.equal(child.signalCode, 'SIGKILL', 'killed mid-stream, not finished');

  // Only complete lines count: a number cut off by the kill was never acknowledged.
  const acked = stdout.split('\n').slice(0, -1).map(Number);
  assert.ok(acked.length >= 20);
  assert.deepEqual(
    acked,
    acked.map((_, i) => i),
    'acknowledgements are consecutive from 0',
  );
  const lastAck = acked.length - 1;

  const storage = openSqliteStorage({ path });
  t.after(() => storage.close());
  assert.equal(storage.corruption, undefined);
  const byName = storage.getDynamicPluginRegistryState()?.plugins['csi-node'] ?? {};
  // At most one registration beyond the last acknowledgement may have landed (written, not yet printed).
  const stored = Object.values(byName).flatMap((list) => list.map((i) => Number(i.options.seq)));
  const highest = Math.max(...stored);
  assert.ok(highest === lastAck || highest === lastAck + 1, `highest stored ${highest}, last ack ${lastAck}`);
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
