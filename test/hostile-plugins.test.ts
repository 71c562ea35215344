/**
 * Hostile plugins against a real daemon (in process: SQLite, the plugin
 * manager, the API on its unix socket) while 20 well-behaved plugins keep
 * registering. Each hostile plugin runs in its own process
 * (test/fixtures/hostile-plugin.ts). Every case must end in a bounded, clear
 * outcome (a named error on its socket, a Notify(false) that says why, or a
 * correct registry) and must leave the good plugins' median registration
 * latency within 3x of a baseline measured in the same case just before.
 *
 * The latency bound is a correctness bound (one plugin must not be able to
 * stall the others), not a benchmark: the baseline is floored at 20 ms so that
 * scheduler noise on a busy 2-core machine cannot fail a case whose baseline
 * happened to be a few milliseconds.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { silentLogger } from '../src/common/index.js';
import { resolveDaemonConfig } from '../src/daemon/config/config.js';
import { createDaemon, type Daemon } from '../src/daemon/daemon.js';
import { createExamplePlugin } from '../src/registration/index.js';
import { siblingModule, spawnModule, stopChild } from '../src/testing/spawn-module.js';
import { createTempDir, type TempDir } from '../src/testing/temp-dir.js';
import { waitFor } from '../src/testing/wait-for.js';

const HOSTILE = siblingModule(import.meta.url, './fixtures/hostile-plugin');
const TYPE = 'example.com/berth-example';
const GOOD_PLUGINS = 20;
const ROUNDS = 4;
const BASELINE_FLOOR_MS = 20;
const OUTCOME_DEADLINE_MS = 60_000;

interface SocketView {
  socketPath: string;
  state: string;
  lastError?: { code: string; message: string };
  plugin?: { type: string; name: string };
}

function sockets(daemon: Daemon): Promise<SocketView[]> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: daemon.apiAddress.socketPath, path: '/v1/sockets', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        try {
          resolve(JSON.parse(text).sockets as SocketView[]);
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function socketOf(daemon: Daemon, path: string): Promise<SocketView | undefined> {
  return (await sockets(daemon)).find((s) => s.socketPath === path);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/**
 * Registers 20 plugins at once, ROUNDS times: the latency of one sample is
 * from a plugin's socket being bound to the plugin hearing Notify(true). After
 * each round the plugins stop and the test waits until the registry has let
 * them go, so every round is a fresh registration.
 */
async function churn(daemon: Daemon, round0: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let round = round0; round < round0 + ROUNDS; round += 1) {
    await Promise.all(
      Array.from({ length: GOOD_PLUGINS }, async (_, i) => {
        const name = `good-${i}`;
        const plugin = createExamplePlugin({
          socketPath: join(daemon.config.pluginsDir, `${name}-r${round}.sock`),
          name,
          type: TYPE,
          versions: ['v1beta1'],
        });
        try {
          await plugin.start();
          const began = performance.now();
          const status = await plugin.nextStatus(OUTCOME_DEADLINE_MS);
          latencies.push(performance.now() - began);
          assert.equal(status.pluginRegistered, true, `${name}: ${status.error}`);
        } finally {
          await plugin.stop();
        }
        await waitFor(
          `${name} round ${round} to be deregistered`,
          () =>
            !daemon.registry
              .listInstances(TYPE, name)
              .some((p) => p.connectionInfo?.socketPath === plugin.socketPath),
          { timeoutMs: OUTCOME_DEADLINE_MS, intervalMs: 10 },
        );
      }),
    );
  }
  return latencies;
}

interface Hostile {
  child: ChildProcess;
  lines: string[];
  notifies(): { pluginRegistered: boolean; error: string }[];
}

async function startHostile(mode: string, daemon: Daemon): Promise<Hostile> {
  const child = spawnModule(HOSTILE, [mode, daemon.config.pluginsDir]);
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  if (child.stdout) createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
  await waitFor(`hostile plugin ${mode} to start`, () => {
    if (lines.includes('ready')) return true;
    if (child.exitCode !== null || child.signalCode !== null) {
      // The stale mode kills itself once its sockets are bound.
      if (mode === 'stale' && lines.includes('ready')) return true;
      throw new Error(`hostile plugin ${mode} exited: ${stderr}`);
    }
    return false;
  }, { timeoutMs: OUTCOME_DEADLINE_MS, intervalMs: 10 });
  return {
    child,
    lines,
    notifies: () =>
      lines.filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { notify: { pluginRegistered: boolean; error: string } }).notify),
  };
}

async function startDaemon(dir: TempDir): Promise<Daemon> {
  const config = resolveDaemonConfig(
    { timeouts: { dial: 2000, getInfo: 1000, notify: 1000 } },
    { dataDir: dir.path },
    { env: {} },
  );
  const daemon = createDaemon(config, { logger: silentLogger });
  await daemon.start();
  return daemon;
}

/**
 * One hostile case: a baseline churn, then the hostile plugin with the same
 * churn beside it, then its outcome, then the latency bound.
 */
async function hostileCase(
  mode: string,
  outcome: (daemon: Daemon, hostile: Hostile, socketPath: string) => Promise<void>,
): Promise<void> {
  await using dir = createTempDir('berth-hostile-');
  const daemon = await startDaemon(dir);
  let hostile: Hostile | undefined;
  try {
    const baseline = median(await churn(daemon, 0));
    hostile = await startHostile(mode, daemon);
    const during = median(await churn(daemon, ROUNDS));
    await outcome(daemon, hostile, join(daemon.config.pluginsDir, `hostile-${mode}.sock`));
    const bound = 3 * Math.max(baseline, BASELINE_FLOOR_MS);
    assert.ok(
      during <= bound,
      `${mode}: good plugins' p50 ${during.toFixed(1)} ms is more than 3x the baseline ${baseline.toFixed(1)} ms`,
    );
  } finally {
    if (hostile) await stopChild(hostile.child, 'SIGKILL');
    await daemon.stop();
  }
}

/** Waits until the hostile socket shows an error with one of the codes (and a matching message). */
async function failsWith(daemon: Daemon, socketPath: string, codes: string[], message?: RegExp) {
  const status = await waitFor(
    `${socketPath} to fail with ${codes.join('|')}`,
    async () => {
      const s = await socketOf(daemon, socketPath);
      return s?.lastError && codes.includes(s.lastError.code) && (!message || message.test(s.lastError.message))
        ? s
        : undefined;
    },
    { timeoutMs: OUTCOME_DEADLINE_MS, intervalMs: 20 },
  );
  assert.ok(['failed', 'backoff', 'pending'].includes(status.state), status.state);
  return status;
}

function assertNotRegistered(daemon: Daemon, namePrefix: string): void {
  const listed = (daemon.registry.listPlugins(TYPE) ?? []).filter((p) => p.name.startsWith(namePrefix));
  assert.deepEqual(listed.map((p) => p.name), []);
}

/** Waits for a Notify(false) whose text matches, and checks the socket names BERTH_PLUGIN_INFO_INVALID. */
async function refusedWith(daemon: Daemon, hostile: Hostile, socketPath: string, text: RegExp) {
  const notify = await waitFor(
    `a Notify(false) matching ${text}`,
    () => hostile.notifies().find((n) => !n.pluginRegistered && text.test(n.error)),
    { timeoutMs: OUTCOME_DEADLINE_MS, intervalMs: 20 },
  );
  assert.match(notify.error, /^RegisterPlugin error -- plugin info out of bounds: /);
  assert.ok(notify.error.length < 300, 'the refusal text is short, whatever the plugin sent');
  await failsWith(daemon, socketPath, ['BERTH_PLUGIN_INFO_INVALID'], text);
  assert.equal(hostile.notifies().filter((n) => n.pluginRegistered).length, 0);
  assertNotRegistered(daemon, 'hostile-');
}

describe('hostile plugins', { concurrency: false }, () => {
  it('GetInfo never answers: the call times out and is retried with backoff', () =>
    hostileCase('getinfo-hang', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_GET_INFO_FAILED'], /DEADLINE|deadline|timed out/i);
      assertNotRegistered(daemon, 'hostile-');
    }));

  it('a plugin that never speaks HTTP/2 fails its dial or GetInfo within the timeouts', () =>
    hostileCase('no-http2', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_DIAL_FAILED', 'BERTH_GET_INFO_FAILED']);
      assertNotRegistered(daemon, 'hostile-');
    }));

  it('a plugin that answers HTTP/2 with text fails its dial or GetInfo', () =>
    hostileCase('garbage', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_DIAL_FAILED', 'BERTH_GET_INFO_FAILED']);
      assertNotRegistered(daemon, 'hostile-');
    }));

  it('a plugin that closes the connection mid-call fails GetInfo', () =>
    hostileCase('close-mid-call', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_GET_INFO_FAILED', 'BERTH_DIAL_FAILED']);
      assertNotRegistered(daemon, 'hostile-');
    }));

  it('a 3 MB GetInfo reply is refused by the 64 KiB receive limit', () =>
    hostileCase('oversized-reply', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_GET_INFO_FAILED'], /larger than max|65536/);
      assertNotRegistered(daemon, 'hostile-');
    }));

  it('an oversized name is refused with Notify(false) naming the limit', () =>
    hostileCase('oversized-name', (daemon, hostile, socketPath) =>
      refusedWith(daemon, hostile, socketPath, /name is \d+ bytes, more than the limit of 512/),
    ));

  it('1,000 supported versions are refused with Notify(false)', () =>
    hostileCase('many-versions', (daemon, hostile, socketPath) =>
      refusedWith(daemon, hostile, socketPath, /supported_versions has 1000 entries, more than the limit of 32/),
    ));

  it('a NUL in the endpoint is refused with Notify(false)', () =>
    hostileCase('nul-endpoint', (daemon, hostile, socketPath) =>
      refusedWith(daemon, hostile, socketPath, /endpoint .* contains the control character U\+0000/),
    ));

  it('invalid UTF-8 fails GetInfo (as in the kubelet) instead of being replaced', () =>
    hostileCase('invalid-utf8', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_GET_INFO_FAILED'], /name is not valid UTF-8/);
      assertNotRegistered(daemon, 'hostile-');
    }));

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
      assert.ok(hostile.notifies().some((n) => n.pluginRegistered), 'the plugin was sent Notify(true)');
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
