/**
 * berth as a user runs it: `berth run` as a real child process on a temp data
 * directory, plugins as real processes (`berth example-plugin`, and a Python
 * grpcio plugin), the HTTP API over the unix socket and TCP, the CLI, SSE,
 * the object manager on the directory source, a SIGTERM stop and a restart
 * on the same data directory.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  BERTH_CLI,
  runModule,
  spawnModule,
  stopChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';
import { pythonGrpcUnavailable, spawnPythonPlugin } from './fixtures/python-plugin.js';

const MAIN = BERTH_CLI;
const EXAMPLE_TYPE = 'example.com/berth-example';
const PYTHON_TYPE = 'example.com/python-interop';

/** Runs the real `berth` CLI to completion. */
const cli = (args: string[]) => runModule(MAIN, args);

interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test reads arbitrary JSON
  json: any;
}

function http(
  target: { socketPath: string } | { port: number },
  method: string,
  path: string,
  body?: string,
  contentType = 'application/json',
): Promise<HttpAnswer> {
  const where =
    'socketPath' in target ? { socketPath: target.socketPath } : { host: '127.0.0.1', port: target.port };
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = contentType;
    const req = request({ ...where, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Sends a request that announces a body far over the limit but sends only its
 * start, as a misbehaving client would; the daemon must refuse it from the
 * Content-Length alone. (Writing the whole body races the daemon's early close: EPIPE.)
 */
function oversizedPut(
  socketPath: string,
  path: string,
  length: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(raw)?.[1]);
      resolve({ status, body: raw.slice(raw.indexOf('\r\n\r\n') + 4) });
    });
    socket.write(
      `PUT ${path} HTTP/1.1\r\nHost: berth\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${length}\r\nConnection: close\r\n\r\n{"metadata":{"uid":"`,
    );
  });
}

/** Collects server-sent events from /v1/events until closed. */
function followEvents(socketPath: string) {
  const events: Array<{ event: string; data: { plugin?: { name: string } } }> = [];
  let buffer = '';
  const req = request({ socketPath, path: '/v1/events' }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let cut = buffer.indexOf('\n\n');
      while (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) events.push({ event, data: JSON.parse(data) });
        cut = buffer.indexOf('\n\n');
      }
    });
  });
  req.on('error', () => {});
  req.end();
  return { events, close: () => req.destroy() };
}

test('berth run, plugins, API, CLI, stop and restart', { timeout: 240_000 }, async (t) => {
  const dir = createTempDir('be-');
  const children = new Set<ChildProcess>();
  t.after(async () => {
    await Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000)));
    dir.remove();
  });

  const dataDir = dir.path;
  const pluginsDir = join(dataDir, 'plugins_registry');
  const apiSocket = join(dataDir, 'berth.sock');
  const unix = { socketPath: apiSocket };
  const configPath = dir.join('berth.yaml');
  writeFileSync(configPath, `handlers:\n  - type: ${PYTHON_TYPE}\n    versions: [v1]\nlogLevel: debug\n`);

  const startDaemon = async () => {
    const daemon = trackChild(
      spawnModule(MAIN, ['run', '--data-dir', dataDir, '--config', configPath, '--listen', '127.0.0.1:0']),
      children,
    );
    const line = await waitForLine(daemon, 'the start-up line', (l) => l.startsWith('berth: watching'));
    assert.equal(line.split('\n').length, 1);
    assert.ok(line.includes(pluginsDir) && line.includes(apiSocket), line);
    const port = Number(/http:\/\/127\.0\.0\.1:(\d+)/.exec(line)?.[1]);
    assert.ok(port > 0, line);
    await waitFor('readyz', async () => (await http(unix, 'GET', '/readyz')).status === 200, {
      timeoutMs: 60_000,
    });
    return { daemon, port };
  };

  const examplePlugin = async (name: string, extra: string[] = []) => {
    const proc = trackChild(
      spawnModule(MAIN, ['example-plugin', '--name', name, '--data-dir', dataDir, ...extra]),
      children,
    );
    await waitForLine(proc, `${name} serving`, (l) => l.includes('serving'));
    return proc;
  };

  const first = await startDaemon();
  const healthz = await http({ port: first.port }, 'GET', '/healthz');
  assert.equal(healthz.status, 200, 'the same API is served on TCP');

  // Plugins: berth's own example plugin, a second one that leaves while berth is down, and a Python one.
  const alpha = await examplePlugin('alpha');
  await waitForLine(alpha, 'alpha registered', (l) => l.includes('registered with the daemon'));
  const gamma = await examplePlugin('gamma');
  await waitForLine(gamma, 'gamma registered', (l) => l.includes('registered with the daemon'));

  const pythonMissing = pythonGrpcUnavailable();
  const withPython = pythonMissing === undefined;
  if (withPython) {
    const python = spawnPythonPlugin({
      socketPath: join(pluginsDir, 'py.sock'),
      name: 'py',
      type: PYTHON_TYPE,
      versions: ['v1'],
    });
    children.add(python.child);
    assert.deepEqual(await python.next('serving'), { event: 'serving' });
    assert.deepEqual(await python.next('the registration status'), {
      event: 'notified',
      registered: true,
      error: '',
    });
  } else {
    t.diagnostic(`without the Python plugin: ${pythonMissing}`);
  }

  // The registry through the API.
  const plugins = await http(unix, 'GET', '/v1/plugins');
  assert.equal(plugins.status, 200);
  const byName = new Map(plugins.json.plugins.map((p: { name: string }) => [p.name, p]));
  const alphaView = byName.get('alpha') as Record<string, unknown>;
  assert.equal(alphaView.type, EXAMPLE_TYPE);
  assert.equal(alphaView.socketPath, join(pluginsDir, 'alpha.sock'));
  assert.deepEqual(alphaView.versions, ['v1beta1', 'v1beta2']);
  assert.equal(alphaView.instances, 1);
  assert.match(String(alphaView.registeredAt), /^\d{4}-\d\d-\d\dT/);
  if (withPython) assert.equal((byName.get('py') as { type: string }).type, PYTHON_TYPE);
  const one = await http(unix, 'GET', `/v1/plugins/${EXAMPLE_TYPE}/alpha`);
  assert.equal(one.status, 200);
  assert.equal(one.json.instances.length, 1);
  const none = await http(unix, 'GET', `/v1/plugins/${EXAMPLE_TYPE}/nobody`);
  assert.equal(none.status, 404);
  assert.equal(none.json.error.code, 'BERTH_PLUGIN_NOT_FOUND');

  const sockets = await http(unix, 'GET', '/v1/sockets');
  const alphaSocket = sockets.json.sockets.find((s: { socketPath: string }) =>
    s.socketPath.endsWith('alpha.sock'),
  );
  assert.equal(alphaSocket.state, 'registered');
  assert.deepEqual(alphaSocket.plugin, { type: EXAMPLE_TYPE, name: 'alpha' });

  // The CLI, for people and for scripts.
  const table = await cli(['plugins', '--data-dir', dataDir]);
  assert.equal(table.code, 0, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  assert.match(lines[0] ?? '', /^TYPE\s+NAME\s+VERSIONS\s+INSTANCES/);
  assert.ok(
    lines.some((l) => /example\.com\/berth-example\s+alpha\s+v1beta1,v1beta2\s+1\s/.test(l)),
    table.stdout,
  );
  const json = await cli(['plugins', '--json', '--api', apiSocket, '--type', EXAMPLE_TYPE]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(
    JSON.parse(json.stdout)
      .plugins.map((p: { name: string }) => p.name)
      .sort(),
    ['alpha', 'gamma'],
  );
  // TCP needs the daemon's token: without one (and with another data directory) the CLI says so.
  const refused = await cli(['status', '--api', `127.0.0.1:${first.port}`, '--json']);
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    new RegExp(
      `^berth: no token given for 127\\.0\\.0\\.1:${first.port}; pass --token-file or set BERTH_TOKEN`,
    ),
  );
  const status = await cli([
    'status',
    '--api',
    `127.0.0.1:${first.port}`,
    '--token-file',
    join(dataDir, 'api-token'),
    '--json',
  ]);
  assert.equal(status.code, 0, status.stderr);
  assert.equal(JSON.parse(status.stdout).ready, true);
  const unreachable = await cli(['plugins', '--api', dir.join('nobody.sock')]);
  assert.equal(unreachable.code, 1);
  assert.equal(unreachable.stderr.trimEnd().split('\n').length, 1);
  assert.match(
    unreachable.stderr,
    /^berth: cannot reach the daemon at .*nobody\.sock: .*\(is `berth run` running\?\)/,
  );
  const usage = await cli(['plugins', '--bogus']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^berth: unknown option '--bogus'/);

  // Events: a plugin comes and goes.
  const stream = followEvents(apiSocket);
  t.after(() => stream.close());
  const follower = trackChild(spawnModule(MAIN, ['events', '--json', '--data-dir', dataDir]), children);
  await waitFor('two event clients', async () => {
    const status = await http(unix, 'GET', '/v1/status');
    return status.json.counts.eventClients === 2;
  });
  const beta = await examplePlugin('beta');
  await waitFor('beta registered event', () =>
    stream.events.find((e) => e.event === 'registered' && e.data.plugin?.name === 'beta'),
  );
  // The registry announces the plugin when its handler accepts it, just before berth's final
  // Notify(true); stopping the plugin in that window makes the Notify fail, and berth rightly
  // rolls the registration back. Stop it only once it has been told it is registered.
  await waitForLine(beta, 'beta told it is registered', (l) => l.includes('registered with the daemon'));
  await stopChild(beta.child, 'SIGTERM');
  await waitFor('beta deregistered event', () =>
    stream.events.find((e) => e.event === 'deregistered' && e.data.plugin?.name === 'beta'),
  );
  const order = stream.events.filter((e) => e.data.plugin?.name === 'beta').map((e) => e.event);
  assert.deepEqual(order, ['registered', 'deregistered']);
  const followed = await waitForLine(follower, 'berth events saw beta leave', (l) =>
    l.includes('"deregistered"'),
  );
  assert.equal(JSON.parse(followed).plugin.name, 'beta');
  assert.ok(
    follower.stdout.some((l) => JSON.parse(l).type === 'registered' && JSON.parse(l).plugin.name === 'beta'),
    'berth events --json printed the registration as one JSON line',
  );
  follower.child.kill('SIGINT');
  assert.equal(await follower.exited, 0, 'berth events ends cleanly on Ctrl-C');

  // A plugin type nobody handles: the kubelet's refusal, then backoff, visible per socket.
  const odd = await examplePlugin('odd', ['--type', 'example.com/unknown']);
  const refusal = await waitForLine(odd, 'odd refused', (l) => l.includes('registration rejected'));
  assert.match(refusal, /no handler registered for plugin type: example\.com\/unknown/);
  const oddSocket = await waitFor('odd socket failed', async () => {
    const all = await http(unix, 'GET', '/v1/sockets');
    return all.json.sockets.find(
      (s: { socketPath: string; state: string }) =>
        s.socketPath.endsWith('odd.sock') && (s.state === 'failed' || s.state === 'backoff'),
    );
  });
  assert.match(oddSocket.lastError.message, /no handler registered for plugin type: example\.com\/unknown/);
  assert.ok(oddSocket.attempts >= 1);

  // Objects: a file under <data-dir>/objects, a pod that references it, a read through the cache.
  mkdirSync(join(dataDir, 'objects', 'secrets', 'ns1'), { recursive: true });
  writeFileSync(
    join(dataDir, 'objects', 'secrets', 'ns1', 'db.json'),
    JSON.stringify({
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'ns1' },
      data: { password: 'aHVudGVyMg==' },
    }),
  );
  const unregistered = await http(unix, 'GET', '/v1/objects/secrets/ns1/db');
  assert.equal(unregistered.status, 404);
  assert.equal(unregistered.json.error.code, 'BERTH_OBJECT_NOT_REGISTERED');
  const podFile = dir.join('pod.yaml');
  writeFileSync(
    podFile,
    [
      'apiVersion: v1',
      'kind: Pod',
      'metadata: {name: web, namespace: ns1, uid: 11111111-2222}',
      'spec:',
      '  containers:',
      '    - name: app',
      '      env:',
      '        - name: PASSWORD',
      '          valueFrom: {secretKeyRef: {name: db, key: password}}',
      '',
    ].join('\n'),
  );
  const applied = await cli(['pods', 'apply', '-f', podFile, '--data-dir', dataDir]);
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /registered pod ns1\/web .*secrets: db/);
  const secret = await waitFor('the secret through the object manager', async () => {
    const answer = await http(unix, 'GET', '/v1/objects/secrets/ns1/db');
    return answer.status === 200 ? answer.json : undefined;
  });
  assert.equal(secret.data.password, 'aHVudGVyMg==');
  const viaCli = await cli(['objects', 'get', 'secrets', 'ns1/db', '--data-dir', dataDir]);
  assert.equal(viaCli.code, 0, viaCli.stderr);
  assert.equal(JSON.parse(viaCli.stdout).metadata.name, 'db');
  const missing = await http(unix, 'GET', '/v1/objects/configmaps/ns1/nothing');
  assert.equal(missing.status, 404);
  const pods = await http(unix, 'GET', '/v1/pods');
  assert.deepEqual(pods.json.pods, [
    { namespace: 'ns1', name: 'web', uid: '11111111-2222', secrets: ['db'], configMaps: [], podVolumes: [] },
  ]);

  // Metrics: the kubelet's gauge and berth's own.
  const metrics = await http(unix, 'GET', '/metrics');
  assert.equal(metrics.status, 200);
  assert.ok(
    metrics.text.includes(
      `plugin_manager_total_plugins{socket_path="${join(pluginsDir, 'alpha.sock')}",state="actual_state_of_world"} 1`,
    ),
    'plugin_manager_total_plugins for alpha',
  );
  assert.match(metrics.text, /berth_registry_events_total\{type="registered"\} [1-9]/);
  assert.match(
    metrics.text,
    /berth_object_cache_requests_total\{resource="secrets",result="(hit|miss)"\} [1-9]/,
  );
  assert.match(metrics.text, /berth_sse_clients 1/);

  // Bad requests get the error shape, and the daemon keeps serving.
  const huge = await oversizedPut(apiSocket, '/v1/pods/ns1/big', 2 * 1024 * 1024);
  assert.equal(huge.status, 413, huge.body);
  assert.equal(
    JSON.parse(huge.body.slice(huge.body.indexOf('{'), huge.body.lastIndexOf('}') + 1)).error.code,
    'BERTH_PAYLOAD_TOO_LARGE',
  );
  const broken = await http(unix, 'PUT', '/v1/pods/ns1/web', '{"metadata":');
  assert.equal(broken.status, 400);
  assert.equal(broken.json.error.code, 'BERTH_BAD_REQUEST');
  const unknown = await http(unix, 'GET', '/v1/nothing-here');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.error.code, 'BERTH_NOT_FOUND');
  assert.equal((await http(unix, 'GET', '/healthz')).status, 200);

  // SIGTERM: a clean stop with exit code 0.
  stream.close();
  await stopChild(odd.child, 'SIGTERM');
  first.daemon.child.kill('SIGTERM');
  assert.equal(await first.daemon.exited, 0, first.daemon.stderr.slice(-5).join('\n'));

  // While berth is down, gamma goes away; alpha (and py) stay.
  await stopChild(gamma.child, 'SIGTERM');
  assert.equal(existsSync(join(pluginsDir, 'gamma.sock')), false);

  // Restart on the same data directory.
  const second = await startDaemon();
  const restored = await http(unix, 'GET', '/v1/plugins');
  const names = restored.json.plugins.map((p: { name: string }) => p.name).sort();
  assert.deepEqual(
    names,
    withPython ? ['alpha', 'py'] : ['alpha'],
    'gamma is gone, the live ones are still there',
  );
  await waitFor(
    'alpha registered again',
    () => alpha.stdout.filter((l) => l.includes('registered with the daemon')).length >= 2,
  );
  const after = await http(unix, 'GET', `/v1/plugins/${EXAMPLE_TYPE}/alpha`);
  assert.equal(after.json.instances.length, 1, 'not duplicated by re-registration');
  const gone = await http(unix, 'GET', `/v1/plugins/${EXAMPLE_TYPE}/gamma`);
  assert.equal(gone.status, 404);

  second.daemon.child.kill('SIGTERM');
  assert.equal(await second.daemon.exited, 0);
  assert.equal(existsSync(apiSocket), false, 'the API socket is removed on stop');
});
