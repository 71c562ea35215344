/**
 * An observer beside a registrar on one plugins directory, as on a node with a
 * kubelet: two real `berth run` processes (the registrar stands in for the
 * kubelet), plugins served by a real child process that counts every GetInfo
 * and NotifyRegistrationStatus it receives. Every plugin must be told exactly
 * once, by the registrar; the observer shows every plugin, then a removed one
 * gone and one whose listener was killed (file left) stale. The observer runs
 * without write access to the directory (0555, and as root without
 * CAP_DAC_OVERRIDE: setpriv drops it, as test/fixtures/registry-readonly.ts does).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  BERTH_CLI,
  type FarmSocketStats,
  runModule,
  spawnModule,
  startPluginFarm,
  stopChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

const MAIN = BERTH_CLI;
const TYPE = 'BenchPlugin';

// biome-ignore lint/suspicious/noExplicitAny: the test reads arbitrary JSON answers
function getJson(socketPath: string, path: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        try {
          resolve(JSON.parse(text));
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** `berth <args>` as root without CAP_DAC_OVERRIDE (file modes apply to it), or plainly when not root. */
function spawnUnprivileged(args: string[]): ChildProcess {
  if (process.getuid?.() !== 0) return spawnModule(MAIN, args);
  const path = fileURLToPath(MAIN);
  const nodeArgs = [...(path.endsWith('.ts') ? ['--import', 'tsx'] : []), path, ...args];
  return spawn(
    'setpriv',
    ['--bounding-set=-dac_override,-dac_read_search', '--', process.execPath, ...nodeArgs],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

interface SocketRow {
  socketPath: string;
  state: string;
  plugin: { type: string; name: string } | null;
  verdict: { accepted: boolean; error: string | null } | null;
  lastError: { message: string } | null;
}

test('an observer beside a registrar: one Notify per plugin, every plugin shown, gone and stale marked', {
  timeout: 180_000,
}, async (t) => {
  const dir = createTempDir('obs-');
  const children = new Set<ChildProcess>();
  const farm = await startPluginFarm();
  const doomed = await startPluginFarm(); // killed with SIGKILL: its socket file stays behind
  t.after(async () => {
    await Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000)));
    await farm.stop();
    await doomed.stop();
    chmodSync(dir.join('plugins'), 0o755);
    dir.remove();
  });

  const pluginsDir = dir.join('plugins');
  mkdirSync(pluginsDir);
  const config = dir.join('berth.yaml');
  writeFileSync(
    config,
    [
      'handlers:',
      `  - type: ${TYPE}`,
      '    versions: [v1]',
      'backoff: { initial: 100ms, max: 1s }',
      // A killed plugin is noticed by its closed connection, not by ping timeouts; a ping timeout as
      // short as the period gave up on live plugins on a loaded machine, leaving them unreachable.
      'liveness: { period: 300ms, timeout: 3s, failureThreshold: 2 }',
      'rescanInterval: 1s',
      '',
    ].join('\n'),
  );
  const paths = ['a', 'b', 'c'].map((n) => join(pluginsDir, `${n}.sock`));
  const killed = join(pluginsDir, 'k.sock');
  await farm.serve(paths, { type: TYPE });
  await doomed.serve([killed], { type: TYPE });
  // Nobody may create anything in the directory now but root with CAP_DAC_OVERRIDE (the
  // registrar, the plugin farm); the observer has neither.
  chmodSync(pluginsDir, 0o555);

  const registrarDir = dir.join('registrar');
  const registrar = trackChild(
    spawnModule(MAIN, ['run', '--data-dir', registrarDir, '--plugins-dir', pluginsDir, '--config', config]),
    children,
  );
  await waitForLine(registrar, 'the registrar started', (l) => l.startsWith('berth: watching'));
  const observerDir = dir.join('observer');
  const observer = trackChild(
    spawnUnprivileged([
      'run',
      '--observe',
      '--data-dir',
      observerDir,
      '--plugins-dir',
      pluginsDir,
      '--config',
      config,
    ]),
    children,
  );
  const line = await waitForLine(observer, 'the observer started', (l) => l.startsWith('berth: observing'));
  assert.match(line, /observing \(read-only\)/);
  const registrarApi = join(registrarDir, 'berth.sock');
  const observerApi = join(observerDir, 'berth.sock');
  const all = [...paths, killed];

  const sockets = async (api: string): Promise<SocketRow[]> => (await getJson(api, '/v1/sockets')).sockets;
  await waitFor(
    'the registrar registered every plugin',
    async () => {
      const rows = await sockets(registrarApi);
      return all.every((p) => rows.find((r) => r.socketPath === p)?.state === 'registered');
    },
    { timeoutMs: 60_000 },
  );
  const observed = await waitFor(
    'the observer observed every plugin',
    async () => {
      const rows = await sockets(observerApi);
      return all.every((p) => rows.find((r) => r.socketPath === p)?.state === 'observed') ? rows : undefined;
    },
    { timeoutMs: 60_000 },
  );
  for (const row of observed) {
    assert.deepEqual(row.verdict, { accepted: true, error: null }, row.socketPath);
    assert.equal(row.plugin?.type, TYPE);
  }

  // Exactly one Notify per plugin, Notify(true), and both berths asked GetInfo.
  const counts = async (): Promise<FarmSocketStats[]> => [
    ...(await farm.stats()).sockets,
    ...(await doomed.stats()).sockets,
  ];
  for (const s of await counts()) {
    assert.equal(s.notifyTrue, 1, `${s.path}: one Notify(true)`);
    assert.equal(s.notifyFalse, 0, `${s.path}: no Notify(false)`);
    assert.ok(s.getInfo >= 2, `${s.path}: GetInfo from the registrar and the observer (${s.getInfo})`);
  }

  // The observer's registry lists them, flagged observed; the registrar's are its own.
  const observedPlugins = (await getJson(observerApi, '/v1/plugins')).plugins as Array<{
    name: string;
    observed: boolean;
  }>;
  assert.deepEqual(observedPlugins.map((p) => [p.name, p.observed]).sort(), [
    ['a', true],
    ['b', true],
    ['c', true],
    ['k', true],
  ]);
  const registered = (await getJson(registrarApi, '/v1/plugins')).plugins as Array<{ observed: boolean }>;
  assert.ok(registered.length === 4 && registered.every((p) => p.observed === false));
  const status = await getJson(observerApi, '/v1/status');
  assert.equal(status.mode, 'observe');
  assert.equal(status.counts.sockets.observed, 4);
  // Nothing persisted: an observer's state is re-read from the directory at each start.
  assert.equal(existsSync(join(observerDir, 'state.db')), false);
  // No kubelet.sock from the observer: the registrar beside it owns the legacy path.
  assert.equal(existsSync(join(observerDir, 'device-plugins', 'kubelet.sock')), false);

  // The CLI marks what is only observed.
  const table = await runModule(MAIN, ['sockets', '--data-dir', observerDir]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /a\.sock\s+observed\s+BenchPlugin\/a\s+.*kubelet would accept/);
  const plugins = await runModule(MAIN, ['plugins', '--data-dir', observerDir]);
  assert.match(plugins.stdout, /BenchPlugin\s+a \(observed\)/);

  // A plugin removed: gone from the observer. A plugin killed with its file left: stale.
  await farm.remove([paths[0] as string]);
  process.kill(doomed.pid, 'SIGKILL');
  let seen: SocketRow[] = [];
  const after = await waitFor(
    'a gone and k stale',
    async () => {
      const rows = await sockets(observerApi);
      seen = rows;
      const gone = !rows.some((r) => r.socketPath === paths[0]);
      return gone && rows.find((r) => r.socketPath === killed)?.state === 'stale' ? rows : undefined;
    },
    { timeoutMs: 60_000 },
  ).catch((err: Error) => {
    // What the observer last showed, and its last log lines: a timeout alone says nothing of why.
    const tail = [...observer.stdout, ...observer.stderr].slice(-40).join('\n');
    throw new Error(`${err.message}; the observer's sockets: ${JSON.stringify(seen)}; its log:\n${tail}`);
  });
  assert.match(after.find((r) => r.socketPath === killed)?.lastError?.message ?? '', /ECONNREFUSED/);
  assert.deepEqual(
    after.filter((r) => r.state === 'observed').map((r) => r.socketPath),
    [paths[1], paths[2]],
  );
  await waitFor('a and k left the observed registry', async () => {
    const names = ((await getJson(observerApi, '/v1/plugins')).plugins as Array<{ name: string }>).map(
      (p) => p.name,
    );
    return names.sort().join(',') === 'b,c';
  });

  // Still one Notify each, after the observer's re-probes.
  for (const s of (await farm.stats()).sockets) assert.equal(s.notifyTrue + s.notifyFalse, 1, s.path);
  assert.equal(registrar.child.exitCode, null, 'the registrar still runs');
  assert.equal(observer.child.exitCode, null, 'the observer still runs');
});
