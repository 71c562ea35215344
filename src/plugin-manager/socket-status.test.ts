import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginInfo } from '../cache/types.js';
import { BerthError } from '../common/index.js';
import type { OperationStatus } from '../executor/index.js';
import { type SocketStatusInputs, socketStatuses } from './socket-status.js';

const gen = (socketPath: string, uuid: string, extra: Partial<PluginInfo> = {}): PluginInfo => ({
  socketPath,
  uuid,
  timestamp: 1,
  foundInDeprecatedDir: false,
  ...extra,
});

function inputs(
  overrides: Partial<SocketStatusInputs> & { ops?: Record<string, OperationStatus> },
): SocketStatusInputs {
  const ops = overrides.ops ?? {};
  return {
    now: 10_000,
    desired: [],
    registered: [],
    operation: (path) => ops[path],
    dead: new Map(),
    registeredAt: new Map(),
    ...overrides,
  };
}

const failure = (code: 'BERTH_DIAL_FAILED' | 'BERTH_NO_HANDLER', details: Record<string, unknown> = {}) =>
  new BerthError(code, `${code} text`, { details });

describe('socket statuses', () => {
  it('shows each state: pending, registered, backoff, failed (window over), and dead', () => {
    const statuses = socketStatuses(
      inputs({
        desired: [gen('/a', 'a1'), gen('/b', 'b1'), gen('/c', 'c1'), gen('/d', 'd1')],
        registered: [
          gen('/b', 'b1', { type: 'T', name: 'b', endpoint: '/b-svc', supportedVersions: ['v1'] }),
        ],
        registeredAt: new Map([['/b', { uuid: 'b1', at: 5, attempts: 2 }]]),
        dead: new Map([
          [
            '/e',
            {
              uuid: 'e1',
              foundInDeprecatedDir: false,
              plugin: { type: 'T', name: 'e' },
              error: new BerthError('BERTH_LIVENESS_FAILED', 'gone quiet'),
              failures: 3,
              at: 9,
            },
          ],
        ]),
        // Liveness probes the dead socket for recovery next at 12 s.
        nextRecoveryProbe: (path) => (path === '/e' ? 12_000 : undefined),
        ops: {
          '/c': {
            pending: false,
            attempts: 2,
            generation: 'c1',
            lastError: failure('BERTH_NO_HANDLER', { type: 'Foo', name: 'c' }),
            lastErrorAt: 9_500,
            retryAt: 10_500,
          },
          '/d': {
            pending: false,
            attempts: 1,
            generation: 'd1',
            lastError: failure('BERTH_DIAL_FAILED'),
            lastErrorAt: 9_000,
            retryAt: 9_500,
          },
        },
      }),
    );
    assert.deepEqual(statuses, [
      { socketPath: '/a', state: 'pending', attempts: 0, foundInDeprecatedDir: false },
      {
        socketPath: '/b',
        state: 'registered',
        attempts: 2,
        foundInDeprecatedDir: false,
        plugin: { type: 'T', name: 'b' },
        endpoint: '/b-svc',
        versions: ['v1'],
        registeredAt: 5,
      },
      {
        socketPath: '/c',
        state: 'backoff',
        attempts: 2,
        foundInDeprecatedDir: false,
        lastError: { code: 'BERTH_NO_HANDLER', message: 'BERTH_NO_HANDLER text' },
        plugin: { type: 'Foo', name: 'c' },
        retryAt: 10_500,
      },
      {
        socketPath: '/d',
        state: 'failed',
        attempts: 1,
        foundInDeprecatedDir: false,
        lastError: { code: 'BERTH_DIAL_FAILED', message: 'BERTH_DIAL_FAILED text' },
        retryAt: 9_500,
      },
      {
        socketPath: '/e',
        state: 'failed',
        attempts: 3,
        plugin: { type: 'T', name: 'e' },
        lastError: { code: 'BERTH_LIVENESS_FAILED', message: 'gone quiet' },
        retryAt: 12_000,
      },
    ]);
  });

  it("an older generation's failure does not count against the new socket file", () => {
    const [status] = socketStatuses(
      inputs({
        desired: [gen('/s', 'live')],
        ops: {
          '/s': {
            pending: false,
            attempts: 5,
            generation: 'stale',
            lastError: failure('BERTH_DIAL_FAILED'),
            retryAt: 20_000,
          },
        },
      }),
    );
    assert.deepEqual(status, {
      socketPath: '/s',
      state: 'pending',
      attempts: 0,
      foundInDeprecatedDir: false,
    });
  });

  it('a registered socket with an operation running is pending', () => {
    const [status] = socketStatuses(
      inputs({
        desired: [gen('/s', 'g')],
        registered: [gen('/s', 'g', { type: 'T', name: 'n' })],
        ops: { '/s': { pending: true, attempts: 1, generation: 'g' } },
      }),
    );
    assert.equal(status?.state, 'pending');
  });
});
