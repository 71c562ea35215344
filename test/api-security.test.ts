/**
 * The daemon's API as an attacker and a careless operator meet it: TCP
 * without a token, with a wrong one and with the right one; DNS-rebinding
 * Host headers; TLS and mutual TLS; the connection and event-stream caps;
 * plugin names with '/' through the API and the CLI; an empty JSON body on
 * DELETE; malformed URLs in berth's error shape; readiness when the plugins
 * directory is replaced by a file. In-process daemons on real sockets, and
 * one `berth run` (the bundle) serving HTTPS.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { silentLogger } from '../src/common/index.js';
import type { ConfigFile } from '../src/daemon/index.js';
import { createDaemon, type Daemon, resolveDaemonConfig } from '../src/daemon/index.js';
import { createExamplePlugin } from '../src/registration/index.js';
import { BERTH_CLI, spawnModule, stopChild, trackChild, waitForLine } from '../src/testing/harness/index.js';
import { createTempDir, type TempDir, waitFor } from '../src/testing/index.js';

const MAIN = BERTH_CLI;
const EXAMPLE = 'example.com/berth-example';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  json: any;
}

interface Target {
  socketPath?: string;
  port?: number;
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
}

function call(
  target: Target,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const where = target.socketPath
      ? { socketPath: target.socketPath }
      : { host: '127.0.0.1', port: target.port };
    const send = target.tls ? httpsRequest : httpRequest;
    const req = send({ ...where, ...(target.tls ?? {}), agent: false, method, path, headers }, (res) => {
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

async function startDaemon(dir: TempDir, file: ConfigFile = {}): Promise<Daemon> {
  const config = resolveDaemonConfig(
    { listen: { host: '127.0.0.1', port: 0 }, ...file },
    { dataDir: dir.path },
    {
      env: {},
    },
  );
  const daemon = createDaemon(config, { logger: silentLogger });
  await daemon.start();
  return daemon;
}

function assertErrorShape(answer: Answer, status: number, code: string): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.json?.error?.code, code, answer.text);
  assert.equal(typeof answer.json?.error?.message, 'string');
}

describe('API security', () => {
  it('TCP needs the bearer token except for /healthz and /readyz; the unix socket needs none', async (t) => {
    await using dir = createTempDir('berth-sec-');
    const daemon = await startDaemon(dir);
    t.after(() => daemon.stop());
    const port = daemon.apiAddress.tcp?.port as number;
    const tokenPath = join(dir.path, 'api-token');
    assert.equal(statSync(tokenPath).mode & 0o777, 0o600, 'token file is owner-only');
    const token = readFileSync(tokenPath, 'utf8').trim();
    assert.ok(token.length >= 32);

    assert.equal((await call({ port }, 'GET', '/healthz')).status, 200);
    assert.equal((await call({ port }, 'GET', '/readyz')).status, 200);
    const none = await call({ port }, 'GET', '/v1/plugins');
    assertErrorShape(none, 401, 'BERTH_UNAUTHORIZED');
    assert.match(String(none.headers['www-authenticate']), /Bearer/);
    assertErrorShape(await call({ port }, 'GET', '/metrics'), 401, 'BERTH_UNAUTHORIZED');
    assertErrorShape(await call({ port }, 'GET', '/v1/events'), 401, 'BERTH_UNAUTHORIZED');
    const wrong = await call({ port }, 'GET', '/v1/plugins', {
      authorization: `Bearer ${token.slice(0, -1)}x`,
    });
    assertErrorShape(wrong, 401, 'BERTH_UNAUTHORIZED');
    assertErrorShape(
      await call({ port }, 'GET', '/v1/plugins', { authorization: `Basic ${token}` }),
      401,
      'BERTH_UNAUTHORIZED',
    );
    const good = await call({ port }, 'GET', '/v1/plugins', { authorization: `Bearer ${token}` });
    assert.equal(good.status, 200);
    assert.deepEqual(good.json, { plugins: [] });
    const metrics = await call({ port }, 'GET', '/metrics', { authorization: `Bearer ${token}` });
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /berth_api_limit_hits_total\{limit="unauthorized"\} [1-9]/);

    // The unix socket is 0600 and its own access control.
    assert.equal(
      (await call({ socketPath: daemon.apiAddress.socketPath }, 'GET', '/v1/plugins')).status,
      200,
    );

    // The token survives a restart unchanged.
    await daemon.stop();
    const again = await startDaemon(dir);
    t.after(() => again.stop());
    assert.equal(readFileSync(tokenPath, 'utf8').trim(), token);
  });

  it('refuses Host names that are not the listen address or configured (DNS rebinding)', async (t) => {
    await using dir = createTempDir('berth-sec-');
    const daemon = await startDaemon(dir, { api: { allowedHosts: ['berth.node.internal'] } });
    t.after(() => daemon.stop());
    const port = daemon.apiAddress.tcp?.port as number;
    const auth = { authorization: `Bearer ${readFileSync(join(dir.path, 'api-token'), 'utf8').trim()}` };
    const rebound = await call({ port }, 'GET', '/v1/plugins', { ...auth, host: `attacker.example:${port}` });
    assertErrorShape(rebound, 403, 'BERTH_FORBIDDEN_HOST');
    // Even the anonymous probes: a rebound page must not learn anything.
    assertErrorShape(
      await call({ port }, 'GET', '/healthz', { host: 'attacker.example' }),
      403,
      'BERTH_FORBIDDEN_HOST',
    );
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'berth.node.internal', `[::1]:${port}`]) {
      assert.equal((await call({ port }, 'GET', '/v1/plugins', { ...auth, host })).status, 200, host);
    }
  });

  it('serves /metrics without a token when metrics.anonymous is set', async (t) => {
    await using dir = createTempDir('berth-sec-');
    const daemon = await startDaemon(dir, { metrics: { anonymous: true } });
    t.after(() => daemon.stop());
    const port = daemon.apiAddress.tcp?.port as number;
    assert.equal((await call({ port }, 'GET', '/metrics')).status, 200);
    assertErrorShape(await call({ port }, 'GET', '/v1/status'), 401, 'BERTH_UNAUTHORIZED');
  });

  it('serves HTTPS; with tls.clientCA a verified client certificate authenticates', async (t) => {
    await using dir = createTempDir('berth-sec-');
    const pki = makePki(dir);
    const daemon = await startDaemon(dir, {
      tls: { cert: pki.serverCert, key: pki.serverKey, clientCA: pki.caCert },
    });
    t.after(() => daemon.stop());
    const port = daemon.apiAddress.tcp?.port as number;
    const ca = readFileSync(pki.caCert);
    const token = readFileSync(join(dir.path, 'api-token'), 'utf8').trim();
    assertErrorShape(await call({ port, tls: { ca } }, 'GET', '/v1/plugins'), 401, 'BERTH_UNAUTHORIZED');
    assert.equal(
      (await call({ port, tls: { ca } }, 'GET', '/v1/plugins', { authorization: `Bearer ${token}` })).status,
      200,
    );
    const withCert = { ca, cert: readFileSync(pki.clientCert), key: readFileSync(pki.clientKey) };
    assert.equal((await call({ port, tls: withCert }, 'GET', '/v1/plugins')).status, 200);
    // Plain HTTP on the TLS port gets nothing.
    await assert.rejects(call({ port }, 'GET', '/v1/plugins', { authorization: `Bearer ${token}` }));
  });

  it('berth run (the bundle, which loads node:https only for TLS) serves HTTPS from a YAML config', async (t) => {
    await using dir = createTempDir('berth-sec-');
    const pki = makePki(dir);
    const configPath = dir.join('berth.yaml');
    writeFileSync(configPath, `tls:\n  cert: ${pki.serverCert}\n  key: ${pki.serverKey}\n`);
    const children = new Set<ChildProcess>();
    t.after(() => Promise.all([...children].map((child) => stopChild(child))));
    const daemon = trackChild(
      spawnModule(MAIN, ['run', '--data-dir', dir.path, '--config', configPath, '--listen', '127.0.0.1:0']),
      children,
    );
    const line = await waitForLine(daemon, 'the start-up line', (l) => l.startsWith('berth: watching'));
    const port = Number(/https:\/\/127\.0\.0\.1:(\d+)/.exec(line)?.[1]);
    assert.ok(port > 0, line);
    const ca = readFileSync(pki.caCert);
    const healthz = await call({ port, tls: { ca } }, 'GET', '/healthz');
    assert.equal(healthz.status, 200, healthz.text);
    await assert.rejects(call({ port }, 'GET', '/healthz'));
  });

  it('caps connections and event streams with a 503 in berth error shape and a metric', async (t) => {
    await using dir = createTempDir('berth-sec-');
    const daemon = await startDaemon(dir, { api: { maxConnections: 4, maxEventStreams: 1 } });
    t.after(() => daemon.stop());
    const socketPath = daemon.apiAddress.socketPath;
    const first = await openStream(socketPath);
    t.after(() => first.destroy());
    const second = await call({ socketPath }, 'GET', '/v1/events');
    assertErrorShape(second, 503, 'BERTH_TOO_MANY_CLIENTS');
    first.destroy();

    const idle: Socket[] = [];
    t.after(() => {
      for (const socket of idle) socket.destroy();
    });
    for (let i = 0; i < 4; i += 1) idle.push(await openIdle(socketPath));
    const refused = await call({ socketPath }, 'GET', '/v1/plugins');
    assertErrorShape(refused, 503, 'BERTH_TOO_MANY_CLIENTS');
    for (const socket of idle) socket.destroy();
    const metrics = await waitFor('a free connection', async () => {
      const answer = await call({ socketPath }, 'GET', '/metrics').catch(() => undefined);
      return answer?.status === 200 ? answer : undefined;
    });
    assert.match(metrics.text, /berth_api_limit_hits_total\{limit="connections"\} [1-9]/);
    assert.match(metrics.text, /berth_api_limit_hits_total\{limit="event-streams"\} 1/);
  });

  it("plugin names and types with '/' are fetched through the API and the CLI", async (t) => {
    await using dir = createTempDir('berth-sec-');
    const daemon = await startDaemon(dir);
    t.after(() => daemon.stop());
    const plugin = createExamplePlugin({
      socketPath: join(daemon.config.pluginsDir, 'dev.sock'),
      name: 'example.com/dev',
      type: EXAMPLE,
      versions: ['v1beta1'],
    });
    t.after(() => plugin.stop());
    await plugin.start();
    await daemon.registry.waitForPlugin(EXAMPLE, 'example.com/dev', {});
    const unix = { socketPath: daemon.apiAddress.socketPath };
    for (const path of [
      `/v1/plugins/${encodeURIComponent(EXAMPLE)}/${encodeURIComponent('example.com/dev')}`,
      `/v1/plugins/${EXAMPLE}/example.com%2Fdev`,
      `/v1/plugins/${EXAMPLE}/example.com/dev`,
    ]) {
      const answer = await call(unix, 'GET', path);
      assert.equal(answer.status, 200, `${path}: ${answer.text}`);
      assert.equal(answer.json.plugin.name, 'example.com/dev');
      assert.equal(answer.json.instances.length, 1);
    }
    assertErrorShape(
      await call(unix, 'GET', `/v1/plugins/${EXAMPLE}/example.com%2Fnope`),
      404,
      'BERTH_PLUGIN_NOT_FOUND',
    );

    const cli = spawnModule(MAIN, [
      'plugins',
      '--api',
      daemon.apiAddress.socketPath,
      '--type',
      EXAMPLE,
      '--name',
      'example.com/dev',
      '--json',
    ]);
    let stdout = '';
    cli.stdout?.on('data', (chunk) => (stdout += chunk));
    const code = await new Promise((resolve) => cli.once('exit', resolve));
    assert.equal(code, 0);
    assert.equal(JSON.parse(stdout).plugin.name, 'example.com/dev');
  });

  it('keeps the error shape for bad URLs, unknown routes and bodies; DELETE takes an empty JSON body', async (t) => {
    await using dir = createTempDir('berth-sec-');
    const daemon = await startDaemon(dir);
    t.after(() => daemon.stop());
    const unix = { socketPath: daemon.apiAddress.socketPath };
    assertErrorShape(await call(unix, 'GET', '/v1/plugins/%zz/x'), 400, 'BERTH_BAD_REQUEST');
    assertErrorShape(await call(unix, 'GET', '/v1/nope%'), 400, 'BERTH_BAD_REQUEST');
    assertErrorShape(await call(unix, 'GET', '/v1/nothing-here'), 404, 'BERTH_NOT_FOUND');
    assertErrorShape(
      await call(unix, 'PUT', '/v1/pods/ns/p', { 'content-type': 'application/json' }, '{"bad'),
      400,
      'BERTH_BAD_REQUEST',
    );
    assertErrorShape(
      await call(unix, 'PUT', '/v1/pods/ns/p', { 'content-type': 'application/json' }, ''),
      400,
      'BERTH_BAD_REQUEST',
    );
    const pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'u-1' },
      spec: { containers: [{ name: 'c' }] },
    };
    assert.equal(
      (await call(unix, 'PUT', '/v1/pods/ns/p', { 'content-type': 'application/json' }, JSON.stringify(pod)))
        .status,
      200,
    );
    const deleted = await call(unix, 'DELETE', '/v1/pods/ns/p', { 'content-type': 'application/json' }, '');
    assert.equal(deleted.status, 200, deleted.text);
    assertErrorShape(
      await call(unix, 'DELETE', '/v1/pods/ns/p', { 'content-type': 'application/json' }),
      404,
      'BERTH_NOT_FOUND',
    );
  });

  it('is not ready while the plugins directory is replaced by a file, and ready again when it is back', async (t) => {
    await using dir = createTempDir('berth-sec-');
    const daemon = await startDaemon(dir);
    t.after(() => daemon.stop());
    const unix = { socketPath: daemon.apiAddress.socketPath };
    assert.equal((await call(unix, 'GET', '/readyz')).status, 200);
    rmSync(daemon.config.pluginsDir, { recursive: true });
    writeFileSync(daemon.config.pluginsDir, 'not a directory');
    const notReady = await call(unix, 'GET', '/readyz');
    assertErrorShape(notReady, 503, 'BERTH_NOT_READY');
    assert.match(notReady.json.error.message, /is not a directory/);
    const status = (await call(unix, 'GET', '/v1/status')).json;
    assert.equal(status.ready, false, '/v1/status agrees with /readyz');
    assert.deepEqual(
      status.readiness.map((c: { name: string; ok: boolean }) => [c.name, c.ok]),
      [
        ['started', true],
        ['plugins-dir', false],
        ['storage', true],
      ],
    );
    const verbose = await call(unix, 'GET', '/readyz?verbose');
    assert.equal(verbose.status, 503);
    assert.match(
      verbose.text,
      /^\[\+\]started ok\n\[-\]plugins-dir failed: .*is not a directory\n\[\+\]storage ok\nreadyz check failed\n$/,
    );
    assert.equal(
      (await call(unix, 'GET', '/livez')).status,
      200,
      'liveness does not depend on the plugins directory',
    );
    rmSync(daemon.config.pluginsDir);
    execFileSync('mkdir', [daemon.config.pluginsDir]);
    assert.equal((await call(unix, 'GET', '/readyz')).status, 200);
    assert.equal((await call(unix, 'GET', '/v1/status')).json.ready, true);
  });

  it('gives tokenless TCP connections a cap and idle timeout of their own: probes and token holders still get in', async (t) => {
    await using dir = createTempDir('berth-sec-');
    const daemon = await startDaemon(dir, {
      api: { maxConnections: 16, maxUnauthenticatedConnections: 4, unauthenticatedIdleTimeout: 1000 },
    });
    t.after(() => daemon.stop());
    const port = daemon.apiAddress.tcp?.port as number;
    const token = readFileSync(join(dir.path, 'api-token'), 'utf8').trim();
    const idle: Socket[] = [];
    let closed = 0;
    t.after(() => {
      for (const socket of idle) socket.destroy();
    });
    // More idle tokenless connections than both caps.
    for (let i = 0; i < 24; i += 1) {
      const socket = await openIdleTcp(port);
      socket.once('close', () => (closed += 1));
      idle.push(socket);
    }
    await waitFor('the oldest idle tokenless connections are closed to make room', () => closed >= 20);
    for (const path of ['/healthz', '/livez', '/readyz']) {
      assert.equal((await call({ port }, 'GET', path)).status, 200, `${path} over TCP`);
    }
    const authed = await call({ port }, 'GET', '/v1/plugins', { authorization: `Bearer ${token}` });
    assert.equal(authed.status, 200, 'an authenticated request succeeds');
    // The rest go after the short idle timeout, well before api.idleTimeout (60 s).
    await waitFor('every idle tokenless connection is closed', () => closed === 24, { timeoutMs: 10_000 });
    const metrics = await call({ port }, 'GET', '/metrics', { authorization: `Bearer ${token}` });
    assert.match(metrics.text, /berth_api_limit_hits_total\{limit="unauthenticated-connections"\} [1-9]/);
  });
});

/** An event stream that has received its opening comment. */
function openStream(socketPath: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    socket.once('error', reject);
    socket.write('GET /v1/events HTTP/1.1\r\nhost: localhost\r\n\r\n');
    socket.on('data', (chunk) => {
      if (chunk.toString().includes(': berth events')) resolve(socket);
    });
  });
}

/** A connection that sends nothing (it counts against api.maxConnections). */
function openIdleTcp(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

function openIdle(socketPath: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** A throwaway CA with a server certificate for 127.0.0.1 and a client certificate. */
function makePki(dir: TempDir) {
  const p = (name: string) => dir.join(name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=berth-test-ca',
  );
  for (const who of ['server', 'client']) {
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      p(`${who}.key`),
      '-out',
      p(`${who}.csr`),
      '-subj',
      `/CN=${who}`,
    );
    writeFileSync(
      p(`${who}.ext`),
      who === 'server' ? 'subjectAltName=IP:127.0.0.1\n' : 'extendedKeyUsage=clientAuth\n',
    );
    ssl(
      'x509',
      '-req',
      '-in',
      p(`${who}.csr`),
      '-CA',
      p('ca.pem'),
      '-CAkey',
      p('ca.key'),
      '-CAcreateserial',
      '-out',
      p(`${who}.pem`),
      '-days',
      '1',
      '-extfile',
      p(`${who}.ext`),
    );
  }
  return {
    caCert: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server.key'),
    clientCert: p('client.pem'),
    clientKey: p('client.key'),
  };
}
