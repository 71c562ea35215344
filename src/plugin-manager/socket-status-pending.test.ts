import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { PluginInfo } from '../cache/types.js';
import { BerthError } from '../common/index.js';
import { socketStatuses } from './socket-status.js';

const wanted: PluginInfo = { socketPath: '/p.sock', uuid: 'g1', timestamp: 1, foundInDeprecatedDir: false };

it('a socket whose retry is in flight is pending and still shows the last error', () => {
  const [status] = socketStatuses({
    now: 10_000,
    desired: [wanted],
    registered: [],
    operation: () => ({
      pending: true,
      attempts: 3,
      generation: 'g1',
      lastError: new BerthError(
        'BERTH_DIAL_FAILED',
        'timed out after 10000 ms (connection state CONNECTING)',
      ),
      lastErrorAt: 9_000,
    }),
    dead: new Map(),
    registeredAt: new Map(),
  });
  assert.equal(status?.state, 'pending');
  assert.equal(status?.attempts, 3);
  assert.deepEqual(status?.lastError, {
    code: 'BERTH_DIAL_FAILED',
    message: 'timed out after 10000 ms (connection state CONNECTING)',
  });
});

it('a registration waiting on its final Notify (already in the actual state) shows attempts and the last error', () => {
  // The plugin that never answers Notify (issue 17): its third attempt is in the actual state while
  // it waits, and used to show `pending`, attempts 0 and no last error.
  const actual: PluginInfo = {
    ...wanted,
    type: 'T',
    name: 'n',
    endpoint: '/p.sock',
    supportedVersions: ['v1'],
  };
  const [status] = socketStatuses({
    now: 10_000,
    desired: [wanted],
    registered: [actual],
    operation: () => ({
      pending: true,
      attempts: 3,
      generation: 'g1',
      lastError: new BerthError('BERTH_NOTIFY_FAILED', 'failed to send registration status'),
      lastErrorAt: 9_000,
    }),
    dead: new Map(),
    registeredAt: new Map(),
  });
  assert.equal(status?.state, 'pending');
  assert.equal(status?.attempts, 3);
  assert.deepEqual(status?.lastError, {
    code: 'BERTH_NOTIFY_FAILED',
    message: 'failed to send registration status',
  });
});
