/**
 * Hostile plugins in registration: oversized fields, too many versions, a
 * NUL in the endpoint, Notify never answered, two sockets with one name, a
 * socket re-created 100 times a second, 1,000 stale sockets.
 * The harness (20 churning good plugins, the 3x latency bound, hostile
 * plugins in child processes) is test/fixtures/hostile-harness.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitFor } from '../src/testing/index.js';
import {
  hostileCase,
  OUTCOME_DEADLINE_MS,
  refusedWith,
  socketOf,
  sockets,
  TYPE,
} from './fixtures/hostile-harness.js';

describe('hostile plugins: registration', { concurrency: false }, () => {
  it('an oversized name is refused with Notify(false) naming the limit', () =>
    hostileCase('oversized-name', (daemon, hostile, socketPath) =>
      refusedWith(daemon, hostile, socketPath, /name is \d+ bytes, more than the limit of 512/),
    ));

  it('1,000 supported versions are refused with Notify(false)', () =>
    hostileCase('many-versions', (daemon, hostile, socketPath) =>
      refusedWith(
        daemon,
        hostile,
        socketPath,
        /supported_versions has 1000 entries, more than the limit of 32/,
      ),
    ));

  it('a NUL in the endpoint is refused with Notify(false)', () =>
    hostileCase('nul-endpoint', (daemon, hostile, socketPath) =>
      refusedWith(daemon, hostile, socketPath, /endpoint .* contains the control character U\+0000/),
    ));

  it('Notify never answered: the registration is rolled back and not listed while it waits to retry', () =>
    hostileCase('notify-hang', async (daemon, hostile, socketPath) => {
      await waitFor(
        'a rolled-back registration in backoff',
        async () => {
          const s = await socketOf(daemon, socketPath);
          if (s?.state !== 'backoff' || s.lastError?.code !== 'BERTH_NOTIFY_FAILED') return false;
          return daemon.registry.listInstances(TYPE, 'hostile-notify-hang').length === 0;
        },
        { timeoutMs: OUTCOME_DEADLINE_MS, intervalMs: 20 },
      );
      assert.ok(
        hostile.notifies().some((n) => n.pluginRegistered),
        'the plugin was sent Notify(true)',
      );
    }));

  it('two sockets with one name are two instances of one plugin', () =>
    hostileCase('two-sockets', async (daemon, _hostile, socketPath) => {
      const instances = await waitFor(
        'both instances',
        () => {
          const list = daemon.registry.listInstances(TYPE, 'hostile-two-sockets');
          return list.length === 2 ? list : undefined;
        },
        { timeoutMs: OUTCOME_DEADLINE_MS, intervalMs: 20 },
      );
      assert.deepEqual(
        instances.map((i) => i.connectionInfo?.socketPath).sort(),
        [socketPath.replace('.sock', '-b.sock'), socketPath].sort(),
      );
      assert.equal(
        (daemon.registry.listPlugins(TYPE) ?? []).filter((p) => p.name === 'hostile-two-sockets').length,
        1,
      );
    }));

  it('a socket re-created 100 times a second for 2 s ends registered exactly once', () =>
    hostileCase('flapping', async (daemon, hostile, socketPath) => {
      await waitFor('the flapping plugin to settle', () => hostile.lines.includes('settled'), {
        timeoutMs: OUTCOME_DEADLINE_MS,
      });
      await waitFor(
        'exactly one registered instance on the final socket',
        async () => {
          const instances = daemon.registry.listInstances(TYPE, 'hostile-flapping');
          const statuses = (await sockets(daemon)).filter((s) => s.socketPath === socketPath);
          return (
            instances.length === 1 &&
            instances[0]?.connectionInfo?.socketPath === socketPath &&
            statuses.length === 1 &&
            statuses[0]?.state === 'registered'
          );
        },
        { timeoutMs: OUTCOME_DEADLINE_MS, intervalMs: 20 },
      );
    }));

  // A stale socket costs the others little: its first dial is one refused connect (no HTTP/2
  // session, registration/dial.ts), and every retry after a refusal probes with a plain connect
  // before it takes a slot (probeBeforeSlot, executor/register-operation.ts), so only sockets that
  // accept wait in the queue for a retry.
  it('1,000 stale sockets fail fast with connection refused and register nothing', () =>
    hostileCase('stale', async (daemon) => {
      const stale = await waitFor(
        'every stale socket to have failed',
        async () => {
          const list = (await sockets(daemon)).filter((s) => s.socketPath.includes('/stale/'));
          return list.length === 1000 && list.every((s) => s.lastError?.code === 'BERTH_DIAL_FAILED')
            ? list
            : undefined;
        },
        { timeoutMs: OUTCOME_DEADLINE_MS, intervalMs: 100 },
      );
      assert.match(stale[0]?.lastError?.message ?? '', /connection refused/);
      assert.equal(
        (daemon.registry.listPlugins(TYPE) ?? []).filter((p) => !p.name.startsWith('good-')).length,
        0,
      );
    }));
});
