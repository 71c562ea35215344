/**
 * A plugin written with a different gRPC stack (Python grpcio) registers
 * through the whole plugin manager: discovery, GetInfo, the handler, and
 * NotifyRegistrationStatus(true) as the plugin itself reports it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createPluginManager } from '../src/plugin-manager/index.js';
import { RecordingHandler } from '../src/testing/recording-handler.js';
import { stopChild } from '../src/testing/spawn-module.js';
import { createTempDir } from '../src/testing/temp-dir.js';
import { waitFor } from '../src/testing/wait-for.js';

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

interface PythonEvent {
  event: string;
  registered?: boolean;
  error?: string;
}

test('a Python grpcio plugin registers through createPluginManager', { timeout: 60_000 }, async (t) => {
  const missing = pythonGrpcMissing();
  if (missing !== undefined) {
    t.skip(`skipped: ${missing}`);
    return;
  }
  const dir = createTempDir();
  t.after(() => dir.remove());
  const manager = createPluginManager({ pluginsDir: dir.join('plugins'), liveness: false });
  t.after(() => manager.stop());
  const handler = new RecordingHandler();
  manager.addHandler('DevicePlugin', handler);
  await manager.start();

  const socketPath = join(dir.join('plugins'), 'py.sock');
  const child = spawn(
    PYTHON,
    [
      fixturePath(),
      '--socket',
      socketPath,
      '--name',
      'py.example.com/gpu',
      '--type',
      'DevicePlugin',
      '--versions',
      'v1beta1,v1beta2',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  t.after(() => stopChild(child, 'SIGTERM', 5_000));
  const events: PythonEvent[] = [];
  if (child.stdout === null) throw new Error('child has no stdout');
  createInterface({ input: child.stdout }).on('line', (line) => events.push(JSON.parse(line) as PythonEvent));

  const notified = await waitFor('the python plugin to be notified', () =>
    child.exitCode !== null
      ? assert.fail(`python plugin exited: ${stderr}`)
      : events.find((e) => e.event === 'notified'),
  );
  assert.deepEqual(notified, { event: 'notified', registered: true, error: '' });
  await waitFor(
    'registered state',
    () => manager.sockets().find((s) => s.socketPath === socketPath)?.state === 'registered',
  );
  const status = manager.sockets().find((s) => s.socketPath === socketPath);
  assert.deepEqual(status?.plugin, { type: 'DevicePlugin', name: 'py.example.com/gpu' });
  assert.equal(status?.endpoint, socketPath, 'an empty endpoint means the registration socket');
  assert.deepEqual(status?.versions, ['v1beta1', 'v1beta2']);
  assert.deepEqual(handler.events, ['validate py.example.com/gpu', 'register py.example.com/gpu']);

  // The plugin removes its socket on SIGTERM: berth deregisters it.
  await stopChild(child, 'SIGTERM', 5_000);
  await waitFor('deregistration', () => !manager.actualState.pluginExists(socketPath));
  await handler.waitForEvents((e) => e.includes('deregister py.example.com/gpu'));
});
