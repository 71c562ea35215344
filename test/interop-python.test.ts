/**
 * Interop: berth's registration client against a plugin written with a
 * different gRPC stack (Python grpcio + google.protobuf, messages built from
 * a descriptor at run time), so a shared encoding bug cannot hide itself.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { dialRegistration } from '../src/registration/index.js';
import { createTempDir } from '../src/testing/temp-dir.js';

const PYTHON = '/usr/bin/python3';

function fixturePath(): string {
  // Beside this file under tsx; from dist/test/ the source tree is two levels up.
  for (const relative of ['./fixtures/python-plugin.py', '../../test/fixtures/python-plugin.py']) {
    const path = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('test/fixtures/python-plugin.py not found');
}

function pythonGrpcMissing(): string | undefined {
  const probe = spawnSync(PYTHON, ['-c', 'import grpc, google.protobuf'], { encoding: 'utf8' });
  if (probe.error) return `${PYTHON} cannot run: ${probe.error.message}`;
  if (probe.status !== 0) return `${PYTHON} cannot import grpc/google.protobuf: ${probe.stderr.trim()}`;
  return undefined;
}

interface PluginEvent {
  event: string;
  registered?: boolean;
  error?: string;
}

/** Lines of JSON events from the child, consumed in order. */
function eventReader(child: ChildProcess) {
  const events: PluginEvent[] = [];
  let consumed = 0;
  let wake: (() => void) | undefined;
  let ended = false;
  if (child.stdout === null) throw new Error('child has no stdout');
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    events.push(JSON.parse(line) as PluginEvent);
    wake?.();
  });
  lines.on('close', () => {
    ended = true;
    wake?.();
  });
  return async function next(what: string, timeoutMs = 20_000): Promise<PluginEvent> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const event = events[consumed];
      if (event !== undefined) {
        consumed += 1;
        return event;
      }
      if (ended) throw new Error(`python plugin exited while waiting for ${what}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  };
}

test('a Python grpcio plugin registers through dialRegistration', { timeout: 60_000 }, async (t) => {
  const missing = pythonGrpcMissing();
  if (missing !== undefined) {
    t.skip(`skipped: ${missing}`);
    return;
  }
  const dir = createTempDir();
  t.after(() => dir.remove());
  const socketPath = dir.join('py-plugin.sock');
  let stderr = '';
  const child = spawn(
    PYTHON,
    [
      fixturePath(),
      '--socket',
      socketPath,
      '--name',
      'py.example.com/plugin',
      '--type',
      'DevicePlugin',
      '--endpoint',
      '/run/py/service.sock',
      '--versions',
      'v1beta1,v1beta2',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const next = eventReader(child);

  assert.deepEqual(await next('serving').catch((err: Error) => assert.fail(`${err.message}\n${stderr}`)), {
    event: 'serving',
  });

  const conn = await dialRegistration(socketPath, { timeoutMs: 10_000 });
  try {
    assert.deepEqual(await conn.getInfo({ timeoutMs: 5_000 }), {
      type: 'DevicePlugin',
      name: 'py.example.com/plugin',
      endpoint: '/run/py/service.sock',
      supportedVersions: ['v1beta1', 'v1beta2'],
    });
    await conn.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, { timeoutMs: 5_000 });
    assert.deepEqual(await next('notified(true)'), { event: 'notified', registered: true, error: '' });
    await conn.notifyRegistrationStatus(
      { pluginRegistered: false, error: 'RegisterPlugin error -- no handler registered for plugin type: X' },
      { timeoutMs: 5_000 },
    );
    assert.deepEqual(await next('notified(false)'), {
      event: 'notified',
      registered: false,
      error: 'RegisterPlugin error -- no handler registered for plugin type: X',
    });
  } finally {
    conn.close();
  }

  child.kill('SIGTERM');
  assert.equal(await exited, 0, `python plugin exit code (stderr: ${stderr})`);
  assert.equal(existsSync(socketPath), false, 'the plugin removes its socket on SIGTERM');
});
