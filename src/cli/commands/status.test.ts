import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatStatus } from './status.js';

test('berth status shows storage health, the handlers and the cluster view', () => {
  const text = formatStatus({
    version: '1.2.3',
    storage: {
      path: '/d/state.db',
      health: {
        state: 'failing',
        failures: 3,
        since: '2026-11-25T10:00:00.000Z',
        lastError: { code: 'BERTH_STORAGE_FAILED', message: 'disk full' },
        pendingDeletes: 0,
        retryAt: null,
      },
      corruption: null,
    },
    handlers: [
      { type: 'CSIPlugin', builtin: true, plugins: 2 },
      { type: 'example.com/gpu', builtin: false, plugins: 0 },
    ],
    cluster: { node: 'n1', leaseState: 'held', lastPublishAgeSeconds: 4, stale: false },
  });
  const line = (key: string) => text.split('\n').find((l) => l.startsWith(`${key}:`));
  assert.match(line('storage health') ?? '', /FAILING since 2026-11-25T10:00:00\.000Z: disk full$/);
  assert.match(line('handlers') ?? '', /CSIPlugin \(2\), example\.com\/gpu \(0\)$/);
  assert.match(line('cluster') ?? '', /node n1, lease held, last publish 4s ago, view current$/);
});

test('berth status without a cluster view or storage health', () => {
  const text = formatStatus({
    storage: { path: '/d/state.db', health: { state: 'ok', failures: 0 } },
    cluster: null,
  });
  assert.match(text, /^storage health: +ok$/m);
  assert.match(text, /^cluster: +not configured$/m);
  const none = formatStatus({
    cluster: { node: 'n1', leaseState: 'none', lastPublishAgeSeconds: null, stale: true },
  });
  assert.match(none, /lease none, nothing published yet, view stale$/m);
});
