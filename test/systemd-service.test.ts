/**
 * berth as a systemd service, without systemd: the shipped unit passes
 * `systemd-analyze verify`, and `berth run` under a NOTIFY_SOCKET (a Python
 * receiver stands in for systemd) sends READY=1 once /readyz answers 200,
 * STATUS= lines, WATCHDOG=1 and STOPPING=1. SIGHUP reloads the config file:
 * the log level and handler versions at once, the rest named as needing a
 * restart, and an invalid file keeps the running config.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SYSTEM_PATHS } from '../src/daemon/contract.js';
import {
  BERTH_CLI,
  getOverUnixSocket,
  notifyReceiverAvailable,
  spawnModule,
  startNotifyReceiver,
  stopChild,
  topLevelJsonKeys,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

const MAIN = BERTH_CLI;
// Compiled tests run from dist/test, tsx from test: the unit is in the checkout's deploy/.
const UNIT = fileURLToPath(
  new URL(
    `${import.meta.url.endsWith('.ts') ? '..' : '../..'}/deploy/systemd/berth.service`,
    import.meta.url,
  ),
);

function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('the systemd unit', () => {
  const unit = readFileSync(UNIT, 'utf8');
  const settings = (key: string) =>
    unit
      .split('\n')
      .filter((line) => line.startsWith(`${key}=`))
      .map((line) => line.slice(key.length + 1));

  it('passes systemd-analyze verify (ExecStart pointed at this checkout)', (t) => {
    if (!hasCommand('systemd-analyze')) {
      t.skip('systemd-analyze is not installed (apt-get install systemd)');
      return;
    }
    // verify checks that ExecStart's binary exists; the shipped unit names
    // /usr/local/bin/berth, where `npm install -g` puts it, which a test machine
    // need not have. A copy runs node on this checkout's CLI instead; nothing else changes.
    const dir = createTempDir();
    t.after(() => dir.remove());
    const copy = unit.replace(
      /^ExecStart=\/usr\/local\/bin\/berth run$/m,
      `ExecStart=${process.execPath} ${fileURLToPath(MAIN)} run`,
    );
    assert.notEqual(copy, unit, 'the unit has the ExecStart line the copy replaces');
    writeFileSync(dir.join('berth.service'), copy);
    const out = execFileSync('systemd-analyze', ['verify', dir.join('berth.service')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    assert.equal(out.trim(), '');
  });

  it("matches berth's defaults and the hardening it was written with", () => {
    assert.deepEqual(settings('Type'), ['notify']);
    assert.deepEqual(settings('Restart'), ['on-failure']);
    assert.equal(settings('WatchdogSec').length, 1);
    assert.deepEqual(settings('ProtectSystem'), ['strict']);
    assert.deepEqual(settings('NoNewPrivileges'), ['yes']);
    assert.deepEqual(settings('PrivateTmp'), ['yes']);
    assert.deepEqual(settings('ProtectHome'), ['yes']);
    assert.deepEqual(settings('ExecReload'), ['/bin/kill -HUP $MAINPID']);
    const writable = settings('ReadWritePaths').join(' ').split(/\s+/);
    for (const path of [SYSTEM_PATHS.dataDir, SYSTEM_PATHS.runtimeDir])
      assert.ok(writable.includes(path), path);
    // The state and runtime directories systemd creates are berth's system paths.
    assert.deepEqual(settings('StateDirectory'), [SYSTEM_PATHS.dataDir.replace('/var/lib/', '')]);
    assert.deepEqual(settings('RuntimeDirectory'), [SYSTEM_PATHS.runtimeDir.replace('/run/', '')]);
    assert.deepEqual(settings('ExecStart'), ['/usr/local/bin/berth run']);
    // The code cache in the directory systemd creates for it (the rest of the system is read-only).
    assert.deepEqual(settings('CacheDirectory'), ['berth']);
    assert.deepEqual(settings('Environment'), ['BERTH_CODE_CACHE_DIR=/var/cache/berth']);
  });
});

describe('berth run under a service manager', () => {
  it('sends READY=1 once /readyz answers 200, STATUS= lines, WATCHDOG=1 and STOPPING=1', {
    timeout: 120_000,
  }, async (t) => {
    if (!notifyReceiverAvailable()) {
      t.skip('needs /usr/bin/python3 for the NOTIFY_SOCKET receiver (Node cannot bind a datagram socket)');
      return;
    }
    const dir = createTempDir();
    t.after(() => dir.remove());
    const receiver = await startNotifyReceiver(dir.join('notify.sock'));
    t.after(() => receiver.stop());
    const children = new Set<ChildProcess>();
    t.after(() => Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000))));
    const dataDir = dir.join('data');
    const daemon = trackChild(
      spawnModule(MAIN, ['run', '--data-dir', dataDir], {
        // WATCHDOG_USEC 0.4 s: a ping every 0.2 s.
        env: { ...process.env, NOTIFY_SOCKET: receiver.path, WATCHDOG_USEC: '400000', WATCHDOG_PID: '' },
      }),
      children,
    );
    await waitFor('READY=1', () => receiver.fields().includes('READY=1'), { timeoutMs: 60_000 });
    // Sent when ready: /readyz already says so.
    const readyz = await getOverUnixSocket(`${dataDir}/berth.sock`, '/readyz');
    assert.equal(readyz.status, 200, readyz.text);
    const readyMessage = receiver.messages.find((m) => m.split('\n').includes('READY=1'));
    assert.equal(readyMessage, 'READY=1\nSTATUS=ready: 0 plugins registered');
    assert.equal(receiver.fields().filter((f) => f === 'READY=1').length, 1);

    // A plugin registers: the status line follows.
    trackChild(spawnModule(MAIN, ['example-plugin', '--data-dir', dataDir, '--name', 'one']), children);
    await waitFor(
      'STATUS with 1 plugin',
      () => receiver.fields().includes('STATUS=ready: 1 plugin registered'),
      {
        timeoutMs: 60_000,
      },
    );
    await waitFor('WATCHDOG=1 pings', () => receiver.fields().filter((f) => f === 'WATCHDOG=1').length >= 3);

    daemon.child.kill('SIGTERM');
    assert.equal(await daemon.exited, 0);
    assert.ok(receiver.fields().includes('STOPPING=1'), receiver.messages.join(' | '));
    const fields = receiver.fields();
    assert.ok(fields.indexOf('STOPPING=1') > fields.indexOf('READY=1'));
  });

  it('does nothing for systemd without NOTIFY_SOCKET, and logs JSON with each key once', {
    timeout: 120_000,
  }, async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const children = new Set<ChildProcess>();
    t.after(() => Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000))));
    const env = { ...process.env };
    delete env.NOTIFY_SOCKET;
    const daemon = trackChild(
      spawnModule(
        MAIN,
        ['run', '--data-dir', dir.join('data'), '--log-format', 'json', '--log-level', 'debug'],
        {
          env,
        },
      ),
      children,
    );
    await waitForLine(daemon, 'the start-up line', (line) => line.startsWith('berth: watching'));
    daemon.child.kill('SIGTERM');
    assert.equal(await daemon.exited, 0);
    assert.ok(daemon.stderr.length > 3, daemon.stderr.join('\n'));
    for (const line of daemon.stderr) {
      const record = JSON.parse(line) as Record<string, unknown>;
      assert.match(String(record.level), /^(trace|debug|info|warn|error|fatal)$/, line);
      assert.match(String(record.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, line);
      const keys = topLevelJsonKeys(line);
      assert.deepEqual(keys, [...new Set(keys)], line);
    }
    assert.ok(!daemon.stderr.some((line) => line.includes('systemd')), 'no notification attempt is logged');
  });
});

/** PUT (or DELETE) a pod with no references on the daemon's API; the HTTP status. */
function putPod(socketPath: string, name: string, method = 'PUT'): Promise<number> {
  const pod = { metadata: { namespace: 'default', name, uid: `uid-${name}` }, spec: {} };
  const path = `/v1/pods/default/${name}`;
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, path, method, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(method === 'PUT' ? JSON.stringify(pod) : undefined);
  });
}

describe('SIGHUP', () => {
  it('applies the log level and handler versions, names what needs a restart, and refuses an invalid file', {
    timeout: 180_000,
  }, async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const children = new Set<ChildProcess>();
    t.after(() => Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000))));
    const dataDir = dir.join('data');
    const config = dir.join('berth.yaml');
    const backoff = 'backoff: {initial: 200ms, max: 1s}\n';
    writeFileSync(
      config,
      `${backoff}logLevel: info\nhandlers: [{type: example.com/reload, versions: [v1]}]\n`,
    );
    const daemon = trackChild(
      spawnModule(MAIN, ['run', '--data-dir', dataDir, '--config', config, '--log-format', 'json']),
      children,
    );
    await waitForLine(daemon, 'the start-up line', (line) => line.startsWith('berth: watching'));
    const records = () => daemon.stderr.map((line) => JSON.parse(line) as Record<string, unknown>);

    // A plugin that speaks only v2 is refused while the handler accepts v1.
    trackChild(
      spawnModule(MAIN, [
        'example-plugin',
        ...['--data-dir', dataDir, '--name', 'late', '--type', 'example.com/reload', '--versions', 'v2'],
      ]),
      children,
    );
    const failures = () => records().filter((r) => String(r.msg).startsWith('plugin registration failed'));
    await waitFor('two failed attempts', () => failures().length >= 2, { timeoutMs: 60_000 });
    // Each failed attempt is logged once (the plugin manager no longer logs it too), with an ISO retryAt.
    const attempts = failures().map((r) => r.attempts);
    assert.deepEqual(attempts, [...new Set(attempts)]);
    assert.match(String(failures()[0]?.retryAt), /Z$/);
    assert.equal(records().filter((r) => r.retryAt !== undefined && typeof r.retryAt === 'number').length, 0);

    const socket = `${dataDir}/berth.sock`;
    assert.equal(await putPod(socket, 'a'), 200);
    assert.equal(await putPod(socket, 'b'), 200);
    await putPod(socket, 'b', 'DELETE');

    writeFileSync(
      config,
      `${backoff}logLevel: debug\nlisten: 127.0.0.1:0\nhandlers: [{type: example.com/reload, versions: [v1, v2]}]\n` +
        'objects: {maxPods: 1, ttl: 30s, strategy: Cache}\n',
    );
    daemon.child.kill('SIGHUP');
    const reloaded = await waitFor('the reload line', () =>
      records().find((r) => String(r.msg).startsWith('config reloaded')),
    );
    assert.equal(
      reloaded.msg,
      'config reloaded: applied logLevel (info → debug), handlers[example.com/reload].versions, ' +
        'objects.ttlMs (60000 → 30000), objects.maxPods (110 → 1); needs a restart: objects.strategy, listen',
    );
    // The cap binds the next apply at once; the pod registered before it stays.
    assert.equal(await putPod(socket, 'b'), 422);
    assert.equal(await putPod(socket, 'a'), 200);
    await waitFor(
      'the v2 plugin registered under the reloaded versions',
      () => records().find((r) => r.msg === 'plugin registered' && r.name === 'late'),
      { timeoutMs: 60_000 },
    );
    // debug lines now appear (the level applied).
    assert.ok(records().some((r) => r.level === 'debug'));

    writeFileSync(config, 'logLevel: chatty\n');
    daemon.child.kill('SIGHUP');
    const refused = await waitFor('the refusal', () =>
      records().find((r) => String(r.msg).startsWith('config reload refused')),
    );
    assert.equal(refused.level, 'warn');
    assert.match(
      String(refused.msg),
      new RegExp(`keeping the running config: config ${config}: logLevel: expected one of`),
    );
    const readyz = await getOverUnixSocket(`${dataDir}/berth.sock`, '/readyz');
    assert.equal(readyz.status, 200);
    daemon.child.kill('SIGTERM');
    assert.equal(await daemon.exited, 0);
  });
});
