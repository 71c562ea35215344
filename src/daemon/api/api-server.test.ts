import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { BerthError, type PluginInstanceInfo, silentLogger, systemClock } from '../../common/index.js';
import type { KubeObject } from '../../objects/index.js';
import { createTempDir, waitFor } from '../../testing/index.js';
import { EventBus } from '../event-bus.js';
import { createPodRegistry } from '../pod-registry.js';
import { closeServer, listenUnix } from './api-listener.js';
import { type ApiApp, createApiApp } from './api-server.js';
import type { ApiBackend, PodDocument, SocketStatus } from './api-types.js';
import type { StatusView } from './wire-types.js';

const EXAMPLE = 'example.com/berth-example';

function instance(name: string, socketPath: string, registeredAt: number): PluginInstanceInfo {
  return {
    type: EXAMPLE,
    name,
    version: 'v1beta2',
    allocId: socketPath,
    connectionInfo: { socketPath },
    options: { supportedVersions: 'v1beta1,v1beta2' },
    registeredAt,
  };
}

/** Small in-test stand-ins for the components behind the API. */
function standIns() {
  const plugins = new Map<string, Map<string, PluginInstanceInfo[]>>([
    [
      EXAMPLE,
      new Map([
        ['alpha', [instance('alpha', '/p/alpha-2.sock', 2000), instance('alpha', '/p/alpha-1.sock', 1000)]],
        ['beta', [instance('beta', '/p/beta.sock', 3000)]],
      ]),
    ],
    ['CSIPlugin', new Map()],
  ]);
  const sockets: SocketStatus[] = [
    {
      socketPath: '/p/alpha-2.sock',
      state: 'registered',
      plugin: { type: EXAMPLE, name: 'alpha' },
      attempts: 1,
    },
    {
      socketPath: '/p/odd.sock',
      state: 'backoff',
      plugin: { type: 'x/unknown', name: 'odd' },
      lastError: { code: 'BERTH_NO_HANDLER', message: 'no handler registered for plugin type: x/unknown' },
      retryAt: Date.UTC(2026, 0, 1),
      attempts: 3,
    },
  ];
  const calls: string[] = [];
  const objects = new Map<string, KubeObject>([
    ['secrets/ns1/s1', { kind: 'Secret', metadata: { name: 's1', namespace: 'ns1' }, data: { k: 'dg==' } }],
  ]);
  const bus = new EventBus({ clock: systemClock });
  let ready = false;
  const registry = new Registry();
  const backend: ApiBackend = {
    plugins: {
      types: () => [...plugins.keys()],
      listPlugins: (type) => {
        const names = plugins.get(type);
        return names ? [...names.values()].flatMap((list) => list.slice(0, 1)) : undefined;
      },
      listInstances: (type, name) => plugins.get(type)?.get(name) ?? [],
    },
    sockets: () => sockets,
    events: bus,
    pods: createPodRegistry({
      manager: {
        registerPod: (pod: PodDocument) => calls.push(`register ${pod.metadata.uid}`),
        unregisterPod: (pod: PodDocument) => calls.push(`unregister ${pod.metadata.uid}`),
      },
      secretNames: () => ['s1'],
      configMapNames: () => [],
      maxPods: 100,
      maxReferencesPerPod: 100,
    }),
    objects: {
      async get(resource, namespace, name) {
        if (name === 'unregistered') {
          throw new BerthError(
            'BERTH_OBJECT_NOT_REGISTERED',
            `object "${namespace}"/"${name}" not registered`,
          );
        }
        if (name === 'slow') {
          throw new BerthError(
            'BERTH_CACHE_SYNC_TIMEOUT',
            'failed to sync secret cache: timed out waiting for the condition',
          );
        }
        const object = objects.get(`${resource}/${namespace}/${name}`);
        if (!object) throw new BerthError('BERTH_OBJECT_NOT_FOUND', `secret "${name}" not found`);
        return object;
      },
    },
    metrics: { contentType: registry.contentType, render: () => registry.metrics() },
    // Only /v1/status's pass-through is under test here (status.ts builds the real document).
    status: () => ({ version: 'test', ready }) as unknown as StatusView,
    readiness: () =>
      ready
        ? { ready: true, checks: [{ name: 'started', ok: true }] }
        : { ready: false, checks: [{ name: 'started', ok: false, reason: 'starting' }] },
  };
  return { backend, calls, bus, setReady: (v: boolean) => (ready = v) };
}

describe('HTTP API routes', () => {
  let api: ApiApp;
  let s: ReturnType<typeof standIns>;
  before(async () => {
    s = standIns();
    api = await createApiApp(s.backend, {
      clock: systemClock,
      logger: silentLogger,
      bodyLimitBytes: 4096,
      sseQueueSize: 16,
      sseHeartbeatMs: 60_000,
    });
  });
  after(() => api.app.close());

  it("builds without fastify's JSON-schema compilers (no route declares a schema)", () => {
    // fastify requires them when the app is made unless it is given its own (api-server.ts).
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    assert.ok(
      loaded.some((file) => file.includes(`${sep}fastify${sep}`)),
      'fastify itself is loaded',
    );
    for (const compiler of ['ajv-compiler', 'fast-json-stringify-compiler']) {
      assert.deepEqual(
        loaded.filter((file) => file.includes(`${sep}@fastify${sep}${compiler}${sep}`)),
        [],
        `@fastify/${compiler} loaded`,
      );
    }
  });

  it('lists one entry per current plugin with its instance count', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/v1/plugins' });
    assert.equal(res.statusCode, 200);
    const { plugins } = res.json();
    assert.deepEqual(
      plugins.map((p: { name: string; socketPath: string; instances: number }) => [
        p.name,
        p.socketPath,
        p.instances,
      ]),
      [
        ['alpha', '/p/alpha-2.sock', 2],
        ['beta', '/p/beta.sock', 1],
      ],
    );
    assert.deepEqual(plugins[0].versions, ['v1beta1', 'v1beta2']);
    assert.equal(plugins[0].registeredAt, new Date(2000).toISOString());
    const filtered = await api.app.inject({ method: 'GET', url: '/v1/plugins?type=CSIPlugin' });
    assert.deepEqual(filtered.json(), { plugins: [] });
  });

  it('shows one plugin with its instances newest first, with or without an encoded slash', async () => {
    for (const url of [`/v1/plugins/${EXAMPLE}/alpha`, `/v1/plugins/${encodeURIComponent(EXAMPLE)}/alpha`]) {
      const res = await api.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      const body = res.json();
      assert.equal(body.plugin.socketPath, '/p/alpha-2.sock');
      assert.deepEqual(
        body.instances.map((i: { socketPath: string }) => i.socketPath),
        ['/p/alpha-2.sock', '/p/alpha-1.sock'],
      );
    }
    const missing = await api.app.inject({ method: 'GET', url: `/v1/plugins/${EXAMPLE}/nope` });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error.code, 'BERTH_PLUGIN_NOT_FOUND');
  });

  it('shows every socket with its state, last error and retry time', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/v1/sockets' });
    const odd = res.json().sockets.find((x: { socketPath: string }) => x.socketPath === '/p/odd.sock');
    assert.equal(odd.state, 'backoff');
    assert.match(odd.lastError.message, /no handler registered for plugin type/);
    assert.equal(odd.retryAt, '2026-01-01T00:00:00.000Z');
    assert.deepEqual(odd.plugin, { type: 'x/unknown', name: 'odd' });
  });

  it('registers, lists and deletes pods, checking the body and naming the bad field', async () => {
    const put = (url: string, payload: unknown) =>
      api.app.inject({
        method: 'PUT',
        url,
        payload: payload as object,
        headers: { 'content-type': 'application/json' },
      });
    const noUid = await put('/v1/pods/ns1/web', { metadata: { name: 'web' } });
    assert.equal(noUid.statusCode, 400);
    assert.equal(noUid.json().error.code, 'BERTH_BAD_REQUEST');
    assert.match(noUid.json().error.message, /^metadata\.uid: /);
    const wrongName = await put('/v1/pods/ns1/web', { metadata: { name: 'api', uid: 'u1' } });
    assert.match(wrongName.json().error.message, /^metadata\.name: /);

    const ok = await put('/v1/pods/ns1/web', { metadata: { name: 'web', uid: 'u1' }, spec: {} });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json().pod, {
      namespace: 'ns1',
      name: 'web',
      uid: 'u1',
      secrets: ['s1'],
      configMaps: [],
      podVolumes: [],
    });
    assert.deepEqual(s.calls, ['register u1']);

    await put('/v1/pods/ns1/web', { metadata: { name: 'web', namespace: 'ns1', uid: 'u2' } });
    assert.deepEqual(s.calls.slice(1), ['unregister u1', 'register u2']);
    const list = await api.app.inject({ method: 'GET', url: '/v1/pods' });
    assert.deepEqual(
      list.json().pods.map((p: { uid: string }) => p.uid),
      ['u2'],
    );
    const del = await api.app.inject({ method: 'DELETE', url: '/v1/pods/ns1/web' });
    assert.equal(del.statusCode, 200);
    assert.deepEqual(s.calls.slice(-1), ['unregister u2']);
    const again = await api.app.inject({ method: 'DELETE', url: '/v1/pods/ns1/web' });
    assert.equal(again.statusCode, 404);
    assert.equal(again.json().error.code, 'BERTH_NOT_FOUND');
  });

  it('maps object-manager errors to fitting statuses', async () => {
    const get = (url: string) => api.app.inject({ method: 'GET', url });
    const found = await get('/v1/objects/secrets/ns1/s1');
    assert.equal(found.statusCode, 200);
    assert.equal(found.json().metadata.name, 's1');
    const cases: Array<[string, number, string]> = [
      ['/v1/objects/secrets/ns1/unregistered', 404, 'BERTH_OBJECT_NOT_REGISTERED'],
      ['/v1/objects/secrets/ns1/gone', 404, 'BERTH_OBJECT_NOT_FOUND'],
      ['/v1/objects/secrets/ns1/slow', 503, 'BERTH_CACHE_SYNC_TIMEOUT'],
      ['/v1/objects/pods/ns1/x', 400, 'BERTH_BAD_REQUEST'],
    ];
    for (const [url, status, code] of cases) {
      const res = await get(url);
      assert.equal(res.statusCode, status, url);
      assert.equal(res.json().error.code, code, url);
    }
  });

  it('answers bad requests with the error shape and keeps serving', async () => {
    const badJson = await api.app.inject({
      method: 'PUT',
      url: '/v1/pods/ns1/web',
      payload: '{"metadata": ',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(badJson.statusCode, 400);
    assert.equal(badJson.json().error.code, 'BERTH_BAD_REQUEST');
    const big = await api.app.inject({
      method: 'PUT',
      url: '/v1/pods/ns1/web',
      payload: JSON.stringify({ metadata: { uid: 'x'.repeat(10_000) } }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().error.code, 'BERTH_PAYLOAD_TOO_LARGE');
    const text = await api.app.inject({
      method: 'PUT',
      url: '/v1/pods/ns1/web',
      payload: 'metadata: {}',
      headers: { 'content-type': 'text/yaml' },
    });
    assert.equal(text.statusCode, 400);
    assert.match(text.json().error.message, /application\/json/);
    const unknown = await api.app.inject({ method: 'GET', url: '/v2/nothing' });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(Object.keys(unknown.json().error).sort(), ['code', 'message']);
    assert.equal(unknown.json().error.code, 'BERTH_NOT_FOUND');
    const healthy = await api.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(healthy.statusCode, 200);
  });

  it('reports readiness and serves metrics as Prometheus text', async () => {
    s.setReady(false);
    const notReady = await api.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(notReady.statusCode, 503);
    assert.equal(notReady.json().error.code, 'BERTH_NOT_READY');
    assert.match(notReady.json().error.message, /started: starting/);
    const verbose = await api.app.inject({ method: 'GET', url: '/readyz?verbose' });
    assert.equal(verbose.statusCode, 503);
    assert.equal(verbose.body, '[-]started failed: starting\nreadyz check failed\n');
    s.setReady(true);
    assert.equal((await api.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    const verboseReady = await api.app.inject({ method: 'GET', url: '/readyz?verbose' });
    assert.equal(verboseReady.statusCode, 200);
    assert.equal(verboseReady.body, '[+]started ok\nreadyz check passed\n');
    assert.equal((await api.app.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
    const metrics = await api.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(String(metrics.headers['content-type']), /^text\/plain/);
  });

  it('streams events to a client as server-sent events and forgets it when it leaves', async (t) => {
    const dir = createTempDir();
    t.after(() => dir.remove());
    const socketPath = dir.join('api.sock');
    const server = await listenUnix(api.handler, socketPath);
    t.after(() => closeServer(server, 100, systemClock));

    let received = '';
    const req = request({ socketPath, path: `/v1/events?type=${encodeURIComponent(EXAMPLE)}` });
    const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', reject);
      req.end();
    });
    assert.equal(response.headers['content-type'], 'text/event-stream; charset=utf-8');
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (received += chunk));
    await waitFor('the subscription', () => s.bus.subscriberCount === 1);

    s.bus.publish({ type: 'registered', at: 5000, plugin: instance('other', '/p/other.sock', 5000) });
    s.bus.publish({
      type: 'registered',
      at: 6000,
      plugin: { ...instance('csi', '/p/csi.sock', 6000), type: 'CSIPlugin' },
    });
    s.bus.publish({ type: 'deregistered', at: 7000, plugin: instance('other', '/p/other.sock', 5000) });
    await waitFor('two events', () => received.includes('event: deregistered'));
    const events = received
      .split('\n\n')
      .filter((block) => block.startsWith('id:'))
      .map((block) => {
        const [idLine, eventLine, dataLine] = block.split('\n');
        return {
          id: Number(idLine?.slice('id: '.length)),
          event: eventLine?.slice('event: '.length),
          data: JSON.parse(dataLine?.slice('data: '.length) ?? ''),
        };
      });
    // Every event is numbered, the filtered-out one included (its id is skipped here).
    assert.deepEqual(
      events.map((e) => e.id - (events[0]?.id ?? 0)),
      [0, 2],
    );
    assert.deepEqual(
      events.map((e) => [e.event, e.data.plugin.name]),
      [
        ['registered', 'other'],
        ['deregistered', 'other'],
      ],
      'the CSIPlugin event is filtered out',
    );
    assert.equal(events[0]?.data.at, new Date(5000).toISOString());

    req.destroy();
    await waitFor('the subscription to be dropped', () => s.bus.subscriberCount === 0);
  });
});
